// The two-read top-k instances (DsaTopkTwoReadInstance): vector ∈ {4, 1} × output ∈ {index,
// pageTable}, as the single-CTA catalog, with a list of 16384 (position, key) entries, and the rule
// by which the launcher takes them.
import { DsaArgumentError } from '../dsaArgumentError.ts';
import { DSA_TOPK_CATALOG_THREADS, DSA_TOPK_CATALOG_UNROLL, dsaTopkClusterSizeFor } from './dsaTopkCatalog.ts';
import { dsaTopkIndexOutput } from './dsaTopkIndexOutput.ts';
import { DSA_TOPK_VECTORS } from './dsaTopkInstance.ts';
import type { DsaTopkOutputKind } from './dsaTopkOutput.ts';
import { dsaTopkPageTableOutput } from './dsaTopkPageTableOutput.ts';
import type { DsaTopkVector } from './dsaTopkRowSweep.ts';
import { DsaTopkTwoReadInstance } from './dsaTopkTwoReadInstance.ts';

/**
 * List entries of the two-read catalog's instances: 16384 (position, key) pairs, 128 KiB (the
 * instance takes 144.4 KiB of shared memory in all). Normal logits of 128K positions at k 2048 list
 * about 2048 + 700 entries; k 4096 with a pass-1 bin of up to 12K keys still fits.
 */
export const DSA_TOPK_TWO_READ_LIST_CAPACITY = 16384;

/** Every two-read top-k instance: output ∈ {index, pageTable} × vector ∈ {4, 1}, 1024 threads, unroll 2, a 16384-entry list (sm_90a). */
export const DSA_TOPK_TWO_READ_CATALOG: readonly DsaTopkTwoReadInstance[] = Object.freeze(
  [dsaTopkIndexOutput, dsaTopkPageTableOutput].flatMap((output) =>
    [...DSA_TOPK_VECTORS].reverse().map(
      (vector) =>
        new DsaTopkTwoReadInstance({
          threads: DSA_TOPK_CATALOG_THREADS,
          vector,
          unroll: DSA_TOPK_CATALOG_UNROLL,
          listCapacity: DSA_TOPK_TWO_READ_LIST_CAPACITY,
          output,
        }),
    ),
  ),
);

/** The two-read catalog instance for `output` with `vector`-wide loads. */
export function dsaTopkTwoReadInstanceFor(output: DsaTopkOutputKind, vector: DsaTopkVector): DsaTopkTwoReadInstance {
  const instance = DSA_TOPK_TWO_READ_CATALOG.find((i) => i.policy.output.kind === output && i.policy.vector === vector);
  if (instance === undefined)
    throw new DsaArgumentError('output', `no two-read top-k instance writes ${output} with ${vector}-wide loads`, output);
  return instance;
}

/**
 * Rows at least this long take the two-read instance where the launch would otherwise take one
 * CTA per row, or where it has this many rows or more (DSA_TOPK_TWO_READ_MIN_ROWS). Shorter rows
 * stay in L2 between the single-CTA kernel's reads. Measured on the H100 (k 2048, GPU spec of
 * 1ce91e3): 128 × 32768 took 15.8 µs two-read, 18.5 with one CTA per row and 20.5 with clusters of 2.
 */
export const DSA_TOPK_TWO_READ_MIN_ROW_STRIDE = 32768;

/**
 * Launches of this many rows or more fill the GPU with one CTA per row and take the two-read
 * instance over clusters. Measured on the H100 (k 2048, 1ce91e3): 128 × 131072 took 60.2 µs
 * two-read and 80.9 with the single-CTA kernel; 32 × 131072 took 42.0 two-read and 29.9 with
 * clusters of 8, so fewer rows keep the clusters.
 */
export const DSA_TOPK_TWO_READ_MIN_ROWS = 128;

/**
 * Whether a launch of `rows` rows of `rowStride` takes the two-read instance
 * (dsaTopkTwoReadInstanceFor): rows of at least DSA_TOPK_TWO_READ_MIN_ROW_STRIDE positions in a
 * launch of at least DSA_TOPK_TWO_READ_MIN_ROWS rows, or one the cluster rule leaves to one CTA per
 * row (dsaTopkClusterSizeFor undefined). It reads a long row twice where the single-CTA kernel
 * reads it three times. `k` does not change the rule: a row whose list would not fit takes the
 * three-read schedule inside the kernel.
 */
export function dsaTopkPrefersTwoRead(config: { readonly rows: number; readonly rowStride: number; readonly k: number }): boolean {
  if (config.rowStride < DSA_TOPK_TWO_READ_MIN_ROW_STRIDE) return false;
  return config.rows >= DSA_TOPK_TWO_READ_MIN_ROWS || dsaTopkClusterSizeFor(config.rows, config.rowStride) === undefined;
}
