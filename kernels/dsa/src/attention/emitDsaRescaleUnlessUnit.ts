// O's online-softmax rescale, skipped by a warp whose rows all kept their running max.
import { and, eq, float32, lit, not, type Target } from '@tilekit/codegen';
import type { BlockOnlineSoftmax } from '@tilekit/fmha';
import type { DistributedTensor, ThreadScope } from '@tilekit/tile';

/**
 * O ×= `factor` (a row tensor of `softmax`), skipped by a warp whose factors are all exactly 1 (none of its rows' running
 * max moved: most key blocks once the max has settled) — a warp-uniform branch (one vote) that keeps the warp's
 * multiplies off the path to its next P·V. O must not be in flight in a wgmma. The decode's pairwise consumers cannot
 * use it: beside their conditional P·V wgmmas ptxas serializes the wgmmas (C7515).
 */
export function emitDsaRescaleUnlessUnit(
  t: ThreadScope,
  target: Target,
  softmax: BlockOnlineSoftmax,
  o: DistributedTensor,
  factor: DistributedTensor,
): void {
  const unit = Array.from({ length: factor.size }, (_, r) => eq(factor.at(t, r), lit(1, float32))).reduce((x, y) => and(x, y));
  t.b.if(not(target.all(unit)), (x) => softmax.emitRescale({ ...t, b: x }, o, factor));
}
