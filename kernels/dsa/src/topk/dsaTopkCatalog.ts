// The top-k kernel's instances: 16-byte or scalar loads × token-index or page-table output, and
// the rule that picks one for a launch (vector loads when the logits allow them).
import { DsaArgumentError } from '../dsaArgumentError.ts';
import { dsaTopkIndexOutput } from './dsaTopkIndexOutput.ts';
import { DsaTopkInstance, DSA_TOPK_VECTORS } from './dsaTopkInstance.ts';
import type { DsaTopkOutputKind } from './dsaTopkOutput.ts';
import { dsaTopkPageTableOutput } from './dsaTopkPageTableOutput.ts';
import type { DsaTopkVector } from './dsaTopkRowSweep.ts';

/** Threads per CTA of the catalog's instances. */
export const DSA_TOPK_CATALOG_THREADS = 1024;

/** Chunks per tile of the catalog's instances (loads in flight per thread). */
export const DSA_TOPK_CATALOG_UNROLL = 2;

/** Candidate-list capacity of the catalog's instances (64 KiB of shared memory). */
export const DSA_TOPK_LIST_CAPACITY = 16384;

/** Every top-k instance: vector ∈ {4, 1} × output ∈ {index, pageTable}, 1024 threads, a 16384-key list (sm_90a). */
export const DSA_TOPK_CATALOG: readonly DsaTopkInstance[] = Object.freeze(
  [dsaTopkIndexOutput, dsaTopkPageTableOutput].flatMap((output) =>
    [...DSA_TOPK_VECTORS].reverse().map(
      (vector) =>
        new DsaTopkInstance({
          threads: DSA_TOPK_CATALOG_THREADS,
          vector,
          unroll: DSA_TOPK_CATALOG_UNROLL,
          listCapacity: DSA_TOPK_LIST_CAPACITY,
          output,
        }),
    ),
  ),
);

/**
 * The vector width a launch can take: 4 when the row stride is a multiple of 4 and the logits
 * start on 16 bytes (every row's start then is 16-byte aligned), else 1.
 */
export function dsaTopkVectorFor(rowStride: number, logitsPtr: bigint): DsaTopkVector {
  return rowStride % 4 === 0 && logitsPtr % 16n === 0n ? 4 : 1;
}

/** The catalog instance for `output` with `vector`-wide loads. */
export function dsaTopkInstanceFor(output: DsaTopkOutputKind, vector: DsaTopkVector): DsaTopkInstance {
  const instance = DSA_TOPK_CATALOG.find((i) => i.policy.output.kind === output && i.policy.vector === vector);
  if (instance === undefined) throw new DsaArgumentError('output', `no top-k instance writes ${output} with ${vector}-wide loads`, output);
  return instance;
}
