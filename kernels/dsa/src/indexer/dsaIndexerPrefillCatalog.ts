// The prefill indexer's instances: one per head count, a 4-deep key ring.
import { DSA_INDEX_HEADS } from '../dsaShape.ts';
import { DsaIndexerPrefillInstance } from './dsaIndexerPrefillInstance.ts';

/** Key tiles in flight per CTA (4 × 8.25 KiB beside the 32 KiB query block: two CTAs fit an SM). */
export const DSA_INDEXER_PREFILL_STAGES = 4;

/** Every prefill-indexer instance: heads ∈ {32, 64} (sm_90a). */
export const DSA_INDEXER_PREFILL_CATALOG: readonly DsaIndexerPrefillInstance[] = Object.freeze(
  DSA_INDEX_HEADS.map((heads) => new DsaIndexerPrefillInstance({ heads, stages: DSA_INDEXER_PREFILL_STAGES })),
);

/** The catalog instance for `heads` (checked by the launcher first). */
export function dsaIndexerPrefillInstanceFor(heads: number): DsaIndexerPrefillInstance {
  return (
    DSA_INDEXER_PREFILL_CATALOG.find((i) => i.policy.heads === heads) ??
    new DsaIndexerPrefillInstance({ heads, stages: DSA_INDEXER_PREFILL_STAGES })
  );
}
