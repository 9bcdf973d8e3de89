// The top-k kernel's instances: the single-CTA kernel (any row length) and the cluster kernel (rows
// up to 131072, C = 1 … 8 CTAs per row), each with 16-byte or scalar loads × token-index or
// page-table output, and the rules that pick one for a launch (vector loads when the logits allow
// them; the cluster size from the row length and the batch).
import { DsaArgumentError } from '../dsaArgumentError.ts';
import { DSA_TOPK_CLUSTER_SIZES, DsaTopkClusterInstance } from './dsaTopkClusterInstance.ts';
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

/** Threads per CTA of the cluster catalog's instances (two CTAs per SM: 64 registers). */
export const DSA_TOPK_CLUSTER_CATALOG_THREADS = 512;

/** Keys each thread of the cluster catalog's instances holds: a CTA's slice holds up to 512 · 32 = 16384 positions. */
export const DSA_TOPK_CLUSTER_CATALOG_KEYS = 32;

/** Positions a CTA of the cluster catalog's instances holds. */
export const DSA_TOPK_CLUSTER_SLICE_CAPACITY = DSA_TOPK_CLUSTER_CATALOG_THREADS * DSA_TOPK_CLUSTER_CATALOG_KEYS;

/** The slice a CTA aims at in small launches (more CTAs per row: shorter latency). */
export const DSA_TOPK_CLUSTER_TARGET_SLICE = 8192;

/**
 * Launches whose clusters of DSA_TOPK_CLUSTER_TARGET_SLICE-position slices need at most this many
 * CTAs take them; larger ones take the fewest CTAs per row whose slices fit. Measured on the H200
 * (k 2048): 1 × 32768 takes 9.0 µs with 4 CTAs per row and 10.3 with 2, while 32 × 32768 takes 12.1
 * with 2 and 14.5 with 4 (128 × 8192: 9.0 with 1, 13.3 with 2).
 */
export const DSA_TOPK_CLUSTER_SPREAD_CTAS = 16;

/**
 * Launches of clusters of 2 or more CTAs needing more CTAs than this take the single-CTA kernel
 * instead: measured on the H200 (k 2048), 128 × 131072 took 75.4 µs with clusters of 8 (1024 CTAs)
 * and 70.3 with one CTA per row, 32 × 131072 26.5 and 54.6, 128 × 32768 17.9 (256 CTAs) and 18.2.
 */
export const DSA_TOPK_CLUSTER_MAX_CTAS = 512;

/** The longest row stride the cluster catalog serves: 8 CTAs × DSA_TOPK_CLUSTER_SLICE_CAPACITY = 131072. */
export const DSA_TOPK_CLUSTER_MAX_ROW_STRIDE = 8 * DSA_TOPK_CLUSTER_SLICE_CAPACITY;

/** Every cluster top-k instance: output ∈ {index, pageTable} × vector ∈ {4, 1} × cluster ∈ {1, 2, 4, 8}, 512 threads of 32 keys (sm_90a). */
export const DSA_TOPK_CLUSTER_CATALOG: readonly DsaTopkClusterInstance[] = Object.freeze(
  [dsaTopkIndexOutput, dsaTopkPageTableOutput].flatMap((output) =>
    [...DSA_TOPK_VECTORS].reverse().flatMap((vector) =>
      DSA_TOPK_CLUSTER_SIZES.map(
        (cluster) =>
          new DsaTopkClusterInstance({
            cluster,
            threads: DSA_TOPK_CLUSTER_CATALOG_THREADS,
            vector,
            unroll: DSA_TOPK_CLUSTER_CATALOG_KEYS / vector,
            output,
          }),
      ),
    ),
  ),
);

const pow2AtLeast = (n: number): number => 2 ** Math.ceil(Math.log2(Math.max(1, n)));

/**
 * The cluster size for `rows` rows of `rowStride`, or undefined when the single-CTA kernel takes
 * the launch: rowStride > DSA_TOPK_CLUSTER_MAX_ROW_STRIDE, or clusters of 2 or more needing more
 * than DSA_TOPK_CLUSTER_MAX_CTAS CTAs. Otherwise the power of two C ≤ 8 giving slices of at most
 * DSA_TOPK_CLUSTER_TARGET_SLICE positions when rows · C ≤ DSA_TOPK_CLUSTER_SPREAD_CTAS, else the
 * fewest CTAs whose slices fit one (⌈rowStride / C⌉ ≤ DSA_TOPK_CLUSTER_SLICE_CAPACITY).
 */
export function dsaTopkClusterSizeFor(rows: number, rowStride: number): number | undefined {
  if (rowStride > DSA_TOPK_CLUSTER_MAX_ROW_STRIDE) return undefined;
  const fewest = pow2AtLeast(Math.ceil(rowStride / DSA_TOPK_CLUSTER_SLICE_CAPACITY));
  const spread = Math.min(8, pow2AtLeast(Math.ceil(rowStride / DSA_TOPK_CLUSTER_TARGET_SLICE)));
  const cluster = rows * spread <= DSA_TOPK_CLUSTER_SPREAD_CTAS ? spread : fewest;
  return cluster > 1 && rows * cluster > DSA_TOPK_CLUSTER_MAX_CTAS ? undefined : cluster;
}

/** The cluster catalog instance for `output` with `vector`-wide loads and `cluster` CTAs per row. */
export function dsaTopkClusterInstanceFor(output: DsaTopkOutputKind, vector: DsaTopkVector, cluster: number): DsaTopkClusterInstance {
  const instance = DSA_TOPK_CLUSTER_CATALOG.find(
    (i) => i.policy.output.kind === output && i.policy.vector === vector && i.policy.cluster === cluster,
  );
  if (instance === undefined)
    throw new DsaArgumentError(
      'cluster',
      `no cluster top-k instance writes ${output} with ${vector}-wide loads and ${cluster} CTAs per row`,
      cluster,
    );
  return instance;
}
