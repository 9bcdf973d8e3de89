import { ONLINE_SOFTMAX_EMPTY, onlineSoftmaxFinalize, onlineSoftmaxUpdate } from '@tilekit/fmha';
import type { AttentionShape, KeyRange } from './attentionShape.ts';
import { roundInPlace } from './roundInPlace.ts';
import type { LowPrecisionFwd } from './torchLikeAttentionFwd.ts';
import { dot } from './dot.ts';

/** How the tiled model runs: keys per step, and (a bug model) one key tile it leaves out. */
export interface TiledFwdOptions {
  readonly tile: number;
  readonly skipTile?: number | undefined;
}

/**
 * A second, independent low-precision forward (our kernels' scheme): per row, key tiles of
 * `tile` keys through @tilekit/fmha's online softmax in the exp2 domain (running maximum, earlier
 * partial sums rescaled), each tile's P narrowed to `dtype` before its P·V, the accumulator rounded
 * to fp32 after each tile; O = acc / l rounded to `dtype`. Tiles outside the row's keys are skipped.
 * `vt` is V with each head transposed (`transposeHeads`).
 */
export function tiledAttentionFwd(
  scores: Float64Array,
  vt: Float64Array,
  shape: AttentionShape,
  dtype: 'fp16' | 'bf16',
  keys: KeyRange,
  options: TiledFwdOptions,
): LowPrecisionFwd {
  const { heads, sq, sk, d } = shape;
  const { tile, skipTile } = options;
  const o = new Float64Array(heads * sq * d);
  const lse = new Float64Array(heads * sq);
  const chunk = new Float64Array(tile);
  const acc = new Float64Array(d);
  for (let h = 0; h < heads; h++) {
    for (let i = 0; i < sq; i++) {
      const [lo, hi] = keys(i);
      const row = (h * sq + i) * sk;
      let state = ONLINE_SOFTMAX_EMPTY;
      acc.fill(0);
      for (let t = 0, j0 = 0; j0 < sk; t++, j0 += tile) {
        const j1 = Math.min(sk, j0 + tile);
        if (t === skipTile || j1 <= lo || j0 >= hi) continue;
        const s = chunk.subarray(0, j1 - j0);
        for (let j = j0; j < j1; j++) s[j - j0] = j >= lo && j < hi ? scores[row + j]! : -Infinity;
        const step = onlineSoftmaxUpdate(state, s, Math.LOG2E);
        state = step.state;
        const p = roundInPlace(dtype, step.p.map(Math.fround));
        for (let c = 0; c < d; c++) acc[c] = Math.fround(acc[c]! * step.correction + dot(p, 0, vt, (h * d + c) * sk + j0, j1 - j0));
      }
      const { inverseSum, lse: rowLse } = onlineSoftmaxFinalize(state);
      const out = (h * sq + i) * d;
      for (let c = 0; c < d; c++) o[out + c] = acc[c]! * inverseSum;
      lse[h * sq + i] = Math.fround(rowLse);
    }
  }
  return { o: roundInPlace(dtype, o), lse };
}
