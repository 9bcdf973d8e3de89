// example_sparge's seeded inputs: synthetic (with locality) or uniform, as 16-bit codes and decoded values.
import { randomBits16 } from '@tilekit/host';
import { SpargeArgumentError, spargeSyntheticInputs, type SpargePlan, type SpargeShape } from '@tilekit/kernel-sparge';
import { decodeArray, encodeArray } from '@tilekit/numeric';

/** The example's inputs: 16-bit codes (what the GPU reads) and their decoded values (what the references read). */
export interface SpargeExampleInputs {
  readonly shape: Required<SpargeShape>;
  readonly bits: { readonly q: Uint16Array; readonly k: Uint16Array; readonly v: Uint16Array };
  readonly values: { readonly q: Float64Array; readonly k: Float64Array; readonly v: Float64Array };
}

/**
 * Seeded inputs for a plan: `synthetic` (spargeSyntheticInputs, rounded to the dtype: locality, so
 * sparsity is real; needs sq = sk and hk = h) or `uniform` ([-1, 1), Q/K/V from seed, seed+1, seed+2).
 * @throws SpargeArgumentError naming `shape.seqlenK` / `shape.nheadK` when synthetic inputs cannot be drawn.
 */
export function spargeExampleInputs(plan: SpargePlan, kind: 'synthetic' | 'uniform', seed: number): SpargeExampleInputs {
  const p = plan.attention;
  const sq = p.mode === 'batch' ? p.seqlenQ : 0;
  const sk = p.mode === 'batch' ? p.seqlenK : 0;
  const shape = { batch: p.batch, nhead: p.nheadQ, nheadK: p.nheadK, seqlenQ: sq, seqlenK: sk, headDim: p.hdimQ };
  let bits: SpargeExampleInputs['bits'];
  if (kind === 'synthetic') {
    if (sk !== sq)
      throw new SpargeArgumentError(
        'shape.seqlenK',
        `must equal seqlenQ = ${sq} for synthetic (self-attention) inputs; use -inputs=uniform`,
        sk,
      );
    if (p.nheadK !== p.nheadQ)
      throw new SpargeArgumentError('shape.nheadK', `must equal nhead = ${p.nheadQ} for synthetic inputs; use -inputs=uniform`, p.nheadK);
    const syn = spargeSyntheticInputs(shape, { seed, roundTo: p.dtype });
    bits = { q: encodeArray(p.dtype, syn.q), k: encodeArray(p.dtype, syn.k), v: encodeArray(p.dtype, syn.v) };
  } else {
    const qn = p.batch * p.nheadQ * sq * p.hdimQ;
    const kn = p.batch * p.nheadK * sk * p.hdimQ;
    bits = { q: randomBits16(p.dtype, qn, seed), k: randomBits16(p.dtype, kn, seed + 1), v: randomBits16(p.dtype, kn, seed + 2) };
  }
  const values = { q: decodeArray(p.dtype, bits.q), k: decodeArray(p.dtype, bits.k), v: decodeArray(p.dtype, bits.v) };
  return { shape, bits, values };
}
