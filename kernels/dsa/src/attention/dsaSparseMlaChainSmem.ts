// The shared memory of the chained sparse MLA schedule (FlashMLA's sm90 prefill layout): Q resident, two key buffers of
// 64 whole 576-wide rows (V is their first 512 columns), the second warpgroup's P, and the small regions.
import { DSA_SPARSE_MLA_SLABS, DSA_SPARSE_MLA_Q_SLAB_BYTES, type DsaSparseMlaSmem } from './dsaSparseMlaSmem.ts';

/** Selected tokens of one key block: the Q·Kᵀ wgmma N and the P·V K. */
export const DSA_SPARSE_MLA_CHAIN_KEYS = 64;

/** Bytes of one key slab: 64 tokens × 64 bf16 columns (128B-swizzled rows). */
export const DSA_SPARSE_MLA_CHAIN_SLAB_BYTES = DSA_SPARSE_MLA_CHAIN_KEYS * 128;

/**
 * The halves of a key buffer, filled and released separately: slabs [0, 4) (V's columns 0–255, the first warpgroup's)
 * and [4, 9) (columns 256–511 and the RoPE slab).
 */
export const DSA_SPARSE_MLA_CHAIN_HALVES: readonly (readonly [number, number])[] = Object.freeze([
  [0, 4],
  [4, DSA_SPARSE_MLA_SLABS],
]);

/** The chained layout: the shared regions' offsets, plus where the second warpgroup's P lives. */
export interface DsaSparseMlaChainSmem extends DsaSparseMlaSmem {
  /** The second warpgroup's P: 64 × 64 bf16 in the K-major 128B-swizzled layout of an A operand (8 KiB). */
  readonly peerP: number;
  /** The four hand-off mbarriers between the warpgroups (after the ring's eight), one per signal of a pair. */
  readonly handoffs: number;
}

/**
 * Q (73728 B) at 0, key buffers b ∈ {0, 1} at 73728 · (1 + b), the second warpgroup's P, validity bytes [2][64], the
 * shared row max [64], the ring's 8 barriers and 4 hand-off barriers: 224.5 KiB. The first warpgroup's P lives in buffer 0's RoPE slab (read only by
 * its own Q·Kᵀ, done by then), and the epilogue's row-sum join reuses Q (every Q·Kᵀ has been waited for by then).
 */
export function dsaSparseMlaChainSmem(): DsaSparseMlaChainSmem {
  const q = DSA_SPARSE_MLA_SLABS * DSA_SPARSE_MLA_Q_SLAB_BYTES;
  const stageBytes = DSA_SPARSE_MLA_SLABS * DSA_SPARSE_MLA_CHAIN_SLAB_BYTES;
  const peerP = q + 2 * stageBytes;
  const valid = peerP + DSA_SPARSE_MLA_CHAIN_SLAB_BYTES;
  const rowMax = valid + 2 * DSA_SPARSE_MLA_CHAIN_KEYS;
  const barriers = rowMax + DSA_SPARSE_MLA_CHAIN_KEYS * 4;
  const handoffs = barriers + 8 * 8;
  return Object.freeze({ q: 0, keys: q, stageBytes, peerP, valid, rowMax, rowSum: 0, barriers, handoffs, used: handoffs + 4 * 8 });
}
