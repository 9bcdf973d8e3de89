// Pooled inputs for the selection stage's tests, computed by the CPU reference (spargeKeyMean,
// spargePoolBlocks) from seeded structured Q/K and rounded to fp32, laid out on the padded grid the
// GPU stage reads; optionally with duplicated K blocks (equal pooled keys: score ties).
import { Prng } from '@tilekit/host';
import { spargeKeyMean, spargePoolBlocks } from '../spargeBlockMapReference.ts';
import { spargeSelectGrid, spargeSelectSeqlens, type SpargeSelectInputs, type SpargeSelectProblem } from './spargeSelectReference.ts';

/** Options of {@link spargeSelectTestInputs}. */
export interface SpargeSelectTestInputOptions {
  readonly seed: number;
  /** Copy every third K block's rows from the block before it (same pooled K, so equal scores). */
  readonly duplicateKeyBlocks?: boolean;
  /** Strength of the per-16-row shared direction (spreads self-similarities over [0, 1]); default 3. */
  readonly structure?: number;
}

/** fp32 pooled inputs on the padded grid (zeros past each sequence's blocks). */
export interface SpargeSelectTestInputs extends SpargeSelectInputs {
  readonly pooledQ: Float32Array;
  readonly simQ: Float32Array;
  readonly pooledK: Float32Array;
  readonly simK: Float32Array;
}

function structuredRows(rng: Prng, rows: number, d: number, structure: number): Float64Array {
  const out = new Float64Array(rows * d);
  const dir = new Float64Array(d);
  let strength = 0;
  for (let n = 0; n < rows; n++) {
    if (n % 16 === 0) {
      for (let c = 0; c < d; c++) dir[c] = rng.nextRange(-1, 1);
      strength = structure * Math.abs(rng.nextRange(-1, 1));
    }
    for (let c = 0; c < d; c++) out[n * d + c] = rng.nextRange(-1, 1) + strength * dir[c]!;
  }
  return out;
}

/**
 * Seeded Q [sq_b][d] and K [sk_b][d] per sequence and head, pooled exactly as the block-map
 * reference pools them (K smoothed by its per-(b, hk) sequence mean; partial tails over their real
 * rows), rounded to fp32 and placed at [b][h][i][·] / [b][hk][j][·] of the padded grid.
 * Postcondition: the same seed gives the same inputs.
 */
export function spargeSelectTestInputs(p: SpargeSelectProblem, options: SpargeSelectTestInputOptions): SpargeSelectTestInputs {
  const grid = spargeSelectGrid(p);
  const lens = spargeSelectSeqlens(p);
  const { qBlocksMax: QM, kBlocksMax: KM } = grid;
  const d = p.headDim;
  const rng = new Prng(options.seed);
  const structure = options.structure ?? 3;
  const pooledQ = new Float32Array(p.batch * p.nhead * QM * d);
  const simQ = new Float32Array(p.batch * p.nhead * QM);
  const pooledK = new Float32Array(p.batch * p.nheadK * KM * d);
  const simK = new Float32Array(p.batch * p.nheadK * KM);
  for (let b = 0; b < p.batch; b++) {
    for (let h = 0; h < p.nhead; h++) {
      const sq = lens.q[b]!;
      if (sq === 0) continue;
      const q = structuredRows(rng, sq, d, structure);
      const pool = spargePoolBlocks(q, 0, sq, d, p.blockQ, null);
      pooledQ.set(pool.pooled, (b * p.nhead + h) * QM * d);
      simQ.set(pool.similarity, (b * p.nhead + h) * QM);
    }
    for (let hk = 0; hk < p.nheadK; hk++) {
      const sk = lens.k[b]!;
      if (sk === 0) continue;
      const k = structuredRows(rng, sk, d, structure);
      if (options.duplicateKeyBlocks === true) {
        for (let j = 2; j * p.blockK < sk; j += 3) {
          const rows = Math.min(p.blockK, sk - j * p.blockK);
          if (rows === p.blockK) k.copyWithin(j * p.blockK * d, (j - 1) * p.blockK * d, j * p.blockK * d);
        }
      }
      const mean = spargeKeyMean(k, 1, 1, sk, d);
      const pool = spargePoolBlocks(k, 0, sk, d, p.blockK, mean);
      pooledK.set(pool.pooled, (b * p.nheadK + hk) * KM * d);
      simK.set(pool.similarity, (b * p.nheadK + hk) * KM);
    }
  }
  return { pooledQ, simQ, pooledK, simK };
}
