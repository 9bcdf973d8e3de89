// The selection kernel's instances: head dim × rows per CTA, and the rule that picks the rows per
// CTA from the sort capacity (more rows share more pooled-K reads but take more shared memory).
import { SPARGE_HEAD_DIMS } from '../spargeShape.ts';
import { SpargeSelectInstance, SPARGE_SELECT_ROWS_PER_CTA } from './spargeSelectInstance.ts';
import { spargeSelectSortLength } from './spargeSelectSortNetwork.ts';

/** nvcc flags the selection instances are compiled with (as the other kernels: C++17, line info). */
export const SPARGE_SELECT_COMPILE_FLAGS: readonly string[] = Object.freeze(['-std=c++17', '-lineinfo']);

/** Sort keys one CTA holds at most (32 KiB of shared memory): rowsPerCta · capacity ≤ this. */
const KEYS_PER_CTA = 4096;

/** Every selection instance: d ∈ {64, 128} × rowsPerCta ∈ {1, 2, 4, 8} (sm_90a). */
export const SPARGE_SELECT_CATALOG: readonly SpargeSelectInstance[] = Object.freeze(
  SPARGE_HEAD_DIMS.flatMap((headDim) => SPARGE_SELECT_ROWS_PER_CTA.map((rowsPerCta) => new SpargeSelectInstance({ headDim, rowsPerCta }))),
);

/**
 * Rows per CTA for a padded grid of kBlocksMax key blocks: the most (≤ 8) whose keys fit in
 * 32 KiB, i.e. 8 up to 512 key blocks, 4 at 1024, 2 at 2048, 1 at 4096.
 * @throws SpargeArgumentError when kBlocksMax exceeds SPARGE_SELECT_MAX_KEY_BLOCKS.
 */
export function spargeSelectRowsPerCta(kBlocksMax: number): number {
  const capacity = spargeSelectSortLength(kBlocksMax);
  return Math.max(...SPARGE_SELECT_ROWS_PER_CTA.filter((r) => r * capacity <= KEYS_PER_CTA));
}

/** The catalog instance for head dim `headDim` and a padded grid of kBlocksMax key blocks. */
export function spargeSelectInstanceFor(headDim: number, kBlocksMax: number): SpargeSelectInstance {
  const rows = spargeSelectRowsPerCta(kBlocksMax);
  return (
    SPARGE_SELECT_CATALOG.find((i) => i.policy.headDim === headDim && i.policy.rowsPerCta === rows) ??
    new SpargeSelectInstance({ headDim, rowsPerCta: rows })
  );
}
