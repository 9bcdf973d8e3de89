// The two-read top-k instances (DsaTopkTwoReadInstance): vector ∈ {4, 1} × output ∈ {index,
// pageTable}, as the single-CTA catalog, with a list of 16384 (position, key) entries, and the rule
// (off for now) that would make the launcher take them.
import { DsaArgumentError } from '../dsaArgumentError.ts';
import { DSA_TOPK_CATALOG_THREADS, DSA_TOPK_CATALOG_UNROLL } from './dsaTopkCatalog.ts';
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
 * Whether a launch the single-CTA kernel takes should take the two-read instance
 * (dsaTopkTwoReadInstanceFor) instead. Always false for now: DsaTopkTwoReadInstance has been
 * checked on the CPU only (its TS twin dsaRadixSelectTwoRead against dsaTopkReference, and the
 * compile spec), never on a GPU. To enable it, the GPU spec's two-read cases must pass and its
 * timing must beat the single-CTA kernel (128 × 131072 at k 2048: 72 µs on the H200, aiming at
 * ≤ 60); then return true for the row strides where it wins (it reads a row twice instead of three
 * times: long rows whose logits do not stay in L2) and let dsaTopkInstanceForLaunch consult it.
 */
export function dsaTopkPrefersTwoRead(config: { readonly rows: number; readonly rowStride: number; readonly k: number }): boolean {
  void config;
  return false;
}
