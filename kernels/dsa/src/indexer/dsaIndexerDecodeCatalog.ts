// The decode indexer's instances: heads × next_n, an 8-deep page ring.
import { DSA_INDEX_HEADS, DSA_NEXT_N } from '../dsaShape.ts';
import { DsaIndexerDecodeInstance } from './dsaIndexerDecodeInstance.ts';

/** Pages in flight per CTA (8 × 8.25 KiB). */
export const DSA_INDEXER_DECODE_STAGES = 8;

/** Every decode-indexer instance: heads ∈ {32, 64} × nextN ∈ {1, 2} (sm_90a). */
export const DSA_INDEXER_DECODE_CATALOG: readonly DsaIndexerDecodeInstance[] = Object.freeze(
  DSA_INDEX_HEADS.flatMap((heads) =>
    DSA_NEXT_N.map((nextN) => new DsaIndexerDecodeInstance({ heads, nextN, stages: DSA_INDEXER_DECODE_STAGES })),
  ),
);

/** The catalog instance for `heads` and `nextN` (both checked by the launcher first). */
export function dsaIndexerDecodeInstanceFor(heads: number, nextN: number): DsaIndexerDecodeInstance {
  const found = DSA_INDEXER_DECODE_CATALOG.find((i) => i.policy.heads === heads && i.policy.nextN === nextN);
  return found ?? new DsaIndexerDecodeInstance({ heads, nextN, stages: DSA_INDEXER_DECODE_STAGES });
}
