// What every Sparge block-map row kernel (K mean, pooling) shares: its dtypes, head dims, block
// rows, threads, vector width, launch shape and policy checks.
import { ArgumentError } from '@tilekit/numeric';

/** Element types of Q and K the block-map kernels read. */
export const SPARGE_POOL_DTYPES = ['fp16', 'bf16'] as const;
/** One of {@link SPARGE_POOL_DTYPES}. */
export type SpargePoolDType = (typeof SPARGE_POOL_DTYPES)[number];
/** Head dims of the block-map kernels (upstream's). */
export const SPARGE_POOL_HEAD_DIMS = [64, 128] as const;
/** Rows per pooled block the kernels are instantiated for (the attention tiles: upstream's 128 × 64 and 64 × 128). */
export const SPARGE_POOL_BLOCK_ROWS = [64, 128] as const;
/** Threads of every block-map row kernel. */
export const SPARGE_POOL_THREADS = 256;
/** Q/K elements per 16-byte vector (fp16/bf16): strides must be multiples of it. */
export const SPARGE_POOL_VECTOR = 8;
/** Largest row count (and row stride) a kernel parameter carries. */
export const SPARGE_POOL_MAX_ROWS = 2 ** 30;

/** A launch: grid (blocks, heads, batch), threads, no dynamic shared memory. */
export interface SpargeRowKernelLaunch {
  readonly grid: readonly [number, number, number];
  readonly block: readonly [number, number, number];
  readonly sharedBytes: number;
}

/** Static shared memory of a kernel's fp32 arrays (each 16-byte aligned, as `BlockEmitter.shared` declares them). */
export function spargeSharedBytes(floatCounts: readonly number[]): number {
  // Each array starts 16-byte aligned; the last one ends unpadded.
  return floatCounts.reduce((end, n) => Math.ceil(end / 16) * 16 + n * 4, 0);
}

/**
 * Checks `policy.dtype` ∈ {fp16, bf16} and `policy.headDim` ∈ {64, 128}.
 * @throws ArgumentError naming `policy.dtype` or `policy.headDim`.
 */
export function checkSpargeRowPolicy(policy: { readonly dtype: string; readonly headDim: number }): void {
  if (!(SPARGE_POOL_DTYPES as readonly string[]).includes(policy.dtype))
    throw new ArgumentError('policy.dtype', `must be one of ${SPARGE_POOL_DTYPES.join(', ')}`, policy.dtype);
  if (!(SPARGE_POOL_HEAD_DIMS as readonly number[]).includes(policy.headDim))
    throw new ArgumentError('policy.headDim', `must be one of ${SPARGE_POOL_HEAD_DIMS.join(', ')}`, policy.headDim);
}
