import { Prng, type Seed } from '@tilekit/host';
import { roundTo } from '@tilekit/numeric';
import { SpargeArgumentError } from './spargeArgumentError.ts';
import { spargeBlockMapReference } from './spargeBlockMapReference.ts';
import { SPARGE_DEFAULTS, type SpargeParams } from './spargeHyperparameters.ts';
import { spargeMaskedAttentionReference } from './spargeReference.ts';
import { resolveSpargeShape, type SpargeShape, type SpargeValues } from './spargeShape.ts';

/** Options of `spargeSyntheticInputs` (all optional). */
export interface SpargeSyntheticOptions {
  readonly seed?: Seed;
  /** Step of the latent random walk on the unit sphere per token (default 0.12): smaller = longer-range locality. */
  readonly walkStep?: number;
  /** Logit range: q·k·scale ≈ sharpness·cos(latent_i, latent_j) (default 8). */
  readonly sharpness?: number;
  /** Relative per-token noise on Q and K (default 0.3). */
  readonly noise?: number;
  /** A per-head offset common to every key, in units of the key norm (default 1): what K smoothing removes. */
  readonly keyOffset?: number;
  /** Round every value to this storage type (default fp16) so a GPU run sees exactly the same inputs. */
  readonly roundTo?: 'fp16' | 'bf16' | 'none';
}

/** Q, K, V (packed bhsd, Float32Array) and the shape they were drawn for. */
export interface SpargeSyntheticInputs {
  readonly shape: SpargeShape;
  readonly q: Float32Array;
  readonly k: Float32Array;
  readonly v: Float32Array;
}

function unitWalk(rng: Prng, length: number, dim: number, step: number): Float64Array {
  const out = new Float64Array(length * dim);
  const z = new Float64Array(dim);
  let norm = 0;
  for (let c = 0; c < dim; c++) {
    z[c] = rng.nextNormal();
    norm += z[c]! * z[c]!;
  }
  for (let n = 0; n < length; n++) {
    if (n > 0) {
      norm = 0;
      for (let c = 0; c < dim; c++) {
        z[c]! += (step / Math.sqrt(dim)) * rng.nextNormal();
        norm += z[c]! * z[c]!;
      }
    }
    const inv = 1 / Math.sqrt(norm);
    for (let c = 0; c < dim; c++) {
      z[c]! *= inv;
      out[n * dim + c] = z[c]!;
    }
    norm = 1;
  }
  return out;
}

/**
 * Structured attention inputs with locality, seeded (xoshiro128** of @tilekit/host): per (batch, head)
 * a latent unit vector z_t random-walks on the sphere (Gaussian steps of `walkStep`, renormalized), so
 * nearby tokens are similar and far ones decorrelate; q_t = a·(z_t + noise), k_t = a·(z_t + noise) +
 * a·keyOffset·u (u a unit vector per head) with a² = sharpness·√d, so scale·q·k ≈ sharpness·cos(z_i,
 * z_j) plus a per-query constant; v_t = a second walk plus noise. Attention mass concentrates near the
 * diagonal and on similar segments, so block sparsity really exists. Requires seqlenQ = seqlenK
 * (self-attention) and nheadK = nhead.
 * Postcondition (tested): the same seed gives the same values; topk 0.5 keeps the relative L1 error
 * ≤ 0.05 at b1 h2 s1024 d64.
 * @throws SpargeArgumentError for a bad shape or option.
 */
export function spargeSyntheticInputs(shape: SpargeShape, options: SpargeSyntheticOptions = {}): SpargeSyntheticInputs {
  const s = resolveSpargeShape(shape, { anyHeadDim: true });
  if (s.seqlenQ !== s.seqlenK)
    throw new SpargeArgumentError('shape.seqlenK', `must equal seqlenQ = ${s.seqlenQ} (self-attention inputs)`, s.seqlenK);
  if (s.nheadK !== s.nhead) throw new SpargeArgumentError('shape.nheadK', `must equal nhead = ${s.nhead}`, s.nheadK);
  const walkStep = options.walkStep ?? 0.12;
  const sharpness = options.sharpness ?? 8;
  const noise = options.noise ?? 0.3;
  const keyOffset = options.keyOffset ?? 1;
  for (const [name, value] of [
    ['walkStep', walkStep],
    ['sharpness', sharpness],
    ['noise', noise],
    ['keyOffset', keyOffset],
  ] as const) {
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
      throw new SpargeArgumentError(`options.${name}`, 'must be a finite number ≥ 0', value);
  }
  const storage = options.roundTo ?? 'fp16';
  if (storage !== 'fp16' && storage !== 'bf16' && storage !== 'none')
    throw new SpargeArgumentError('options.roundTo', 'must be fp16, bf16 or none', storage);
  const { batch, nhead, seqlenQ: n, headDim: d } = s;
  const rng = new Prng(options.seed ?? 1);
  const amplitude = Math.sqrt(sharpness * Math.sqrt(d));
  const rowNoise = noise / Math.sqrt(d);
  const round = storage === 'none' ? Math.fround : (x: number): number => roundTo(storage, x);
  const q = new Float32Array(batch * nhead * n * d);
  const k = new Float32Array(q.length);
  const v = new Float32Array(q.length);
  for (let bh = 0; bh < batch * nhead; bh++) {
    const latent = unitWalk(rng, n, d, walkStep);
    const values = unitWalk(rng, n, d, walkStep * 2);
    const offset = unitWalk(rng, 1, d, 0);
    for (let t = 0; t < n; t++) {
      for (let c = 0; c < d; c++) {
        const at = (bh * n + t) * d + c;
        const z = latent[t * d + c]!;
        q[at] = round(amplitude * (z + rowNoise * rng.nextNormal()));
        k[at] = round(amplitude * (z + rowNoise * rng.nextNormal() + keyOffset * offset[c]!));
        v[at] = round(values[t * d + c]! * Math.sqrt(d) + 0.5 * rng.nextNormal());
      }
    }
  }
  return { shape: s, q, k, v };
}

/** Upstream's accuracy metric (precision_metric "L1"): Σ|o − ref| / Σ|ref| (0 when both are 0). */
export function spargeRelativeL1(o: ArrayLike<number>, reference: ArrayLike<number>): number {
  if (o.length !== reference.length) throw new SpargeArgumentError('o', `must have the reference's ${reference.length} elements`, o.length);
  let num = 0;
  let den = 0;
  for (let i = 0; i < o.length; i++) {
    num += Math.abs(o[i]! - reference[i]!);
    den += Math.abs(reference[i]!);
  }
  return den === 0 ? (num === 0 ? 0 : Infinity) : num / den;
}

/** One point of the error/sparsity curve. */
export interface SpargeCurvePoint {
  /** The selection value (topk ratio or cdf threshold). */
  readonly value: number;
  readonly achievedSparsity: number;
  /** Σ|O_sparse − O_dense| / Σ|O_dense|. */
  readonly relativeL1: number;
}

/**
 * The error/sparsity curve of the CPU references: for each selection value (topk, or cdfthreshd with
 * `selection: 'cdf'`), the block map of `params` with that value, the block-masked attention, its
 * achieved sparsity and relative L1 error against dense attention (every block on, same causality).
 * For the benchmark report and the accuracy tests.
 */
export function spargeErrorSparsityCurve(
  inputs: { readonly shape: SpargeShape; readonly q: SpargeValues; readonly k: SpargeValues; readonly v: SpargeValues },
  values: readonly number[],
  params: Omit<SpargeParams, 'topk' | 'cdfthreshd'> = {},
  selection: 'topk' | 'cdf' = 'topk',
): SpargeCurvePoint[] {
  const shape = resolveSpargeShape(inputs.shape);
  const blockQ = params.blockQ ?? SPARGE_DEFAULTS.blockQ;
  const blockK = params.blockK ?? SPARGE_DEFAULTS.blockK;
  const isCausal = params.isCausal ?? SPARGE_DEFAULTS.isCausal;
  const common = { shape, q: inputs.q, k: inputs.k, v: inputs.v, blockQ, blockK, isCausal };
  const full = spargeBlockMapReference({ shape, q: inputs.q, k: inputs.k, params: { ...params, blockQ, blockK, topk: 1, simthreshd1: 2 } });
  const dense = spargeMaskedAttentionReference({ ...common, blocks: full.blockMap });
  return values.map((value) => {
    const predicted = spargeBlockMapReference({
      shape,
      q: inputs.q,
      k: inputs.k,
      params: { ...params, blockQ, blockK, ...(selection === 'topk' ? { topk: value } : { cdfthreshd: value }) },
    });
    const sparse = spargeMaskedAttentionReference({ ...common, blocks: predicted.lut });
    return { value, achievedSparsity: predicted.achievedSparsity, relativeL1: spargeRelativeL1(sparse.o, dense.o) };
  });
}
