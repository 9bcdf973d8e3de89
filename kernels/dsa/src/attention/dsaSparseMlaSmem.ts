// The shared memory of the sparse MLA kernels: Q resident, four key stages of whole 576-wide rows
// (V is the first 512 columns of the same rows), the stages' validity bytes, the row-max and row-sum
// exchanges of the two consumer warpgroups, and the ring's barriers.
import { DSA_SPARSE_MLA_QK_DIM } from '../dsaSparseMlaShape.ts';

/** Query rows of a block: 64 query heads of one token (the wgmma M). */
export const DSA_SPARSE_MLA_HEAD_BLOCK = 64;

/** Selected tokens of one key tile (the Q·Kᵀ wgmma N and the P·V K). */
export const DSA_SPARSE_MLA_KEYS = 32;

/** Columns of one 128B-swizzled slab of bf16 (128 bytes per row). */
export const DSA_SPARSE_MLA_SLAB = 64;

/** Slabs of a 576-wide row: 8 latent (the V columns) and one RoPE slab. */
export const DSA_SPARSE_MLA_SLABS = DSA_SPARSE_MLA_QK_DIM / DSA_SPARSE_MLA_SLAB;

/** Bytes of one Q slab (64 rows × 128) and of one key slab (32 rows × 128). */
export const DSA_SPARSE_MLA_Q_SLAB_BYTES = DSA_SPARSE_MLA_HEAD_BLOCK * 128;
export const DSA_SPARSE_MLA_K_SLAB_BYTES = DSA_SPARSE_MLA_KEYS * 128;

/**
 * Key stages of the ring: tile it lives in stage it mod 4, so while the consumers work on a pair of
 * tiles (stages 2·(p mod 2) + {0, 1}) the producer fills the other two with the next pair.
 */
export const DSA_SPARSE_MLA_STAGES = 4;

/** Byte offsets of the regions (from the 1024-aligned base) and the bytes used. */
export interface DsaSparseMlaSmem {
  /** Q: 9 slabs of [64 heads × 64 columns], 128B-swizzled (the A operand of Q·Kᵀ). */
  readonly q: number;
  /**
   * Key stage s at keys + s · stageBytes: 9 slabs of [32 tokens × 64 columns], 128B-swizzled (K-major
   * B of Q·Kᵀ; slabs 0–7 are V as an MN-major B of P·V). Once a stage's Q·Kᵀ is done its RoPE slab
   * holds the P fragments of the warpgroup that scored it (4 KiB: 128 threads × 8 words).
   */
  readonly keys: number;
  readonly stageBytes: number;
  /** One byte per token of each stage: 1 where the index is valid. */
  readonly valid: number;
  /** float [2][64]: each warpgroup's tile row maxima. */
  readonly rowMax: number;
  /** float [2][2][128]: each warpgroup's thread-partial row sums (two rows per thread). */
  readonly rowSum: number;
  /** full[4], empty[4] (uint64). */
  readonly barriers: number;
  /** FP8 decode only (else absent): [4 stages][32 tokens][4] fp32 tile scales as gathered from the cache. */
  readonly fp8Scales?: number;
  readonly used: number;
}

/**
 * The layout: Q (73728 B), 4 stages (147456 B), then the small regions; 219 KiB in all, plus 2 KiB of gathered tile
 * scales when `fp8Scales` (the FP8 decode stages a token's raw bytes before dequantizing them).
 */
export function dsaSparseMlaSmem(options: { readonly fp8Scales?: boolean } = {}): DsaSparseMlaSmem {
  const q = DSA_SPARSE_MLA_SLABS * DSA_SPARSE_MLA_Q_SLAB_BYTES;
  const stageBytes = DSA_SPARSE_MLA_SLABS * DSA_SPARSE_MLA_K_SLAB_BYTES;
  const valid = q + DSA_SPARSE_MLA_STAGES * stageBytes;
  const rowMax = valid + DSA_SPARSE_MLA_STAGES * DSA_SPARSE_MLA_KEYS;
  const rowSum = rowMax + 2 * DSA_SPARSE_MLA_HEAD_BLOCK * 4;
  const barriers = rowSum + 2 * 2 * 128 * 4;
  const end = barriers + 2 * DSA_SPARSE_MLA_STAGES * 8;
  if (options.fp8Scales !== true) return Object.freeze({ q: 0, keys: q, stageBytes, valid, rowMax, rowSum, barriers, used: end });
  const fp8Scales = end;
  const used = fp8Scales + DSA_SPARSE_MLA_STAGES * DSA_SPARSE_MLA_KEYS * 16;
  return Object.freeze({ q: 0, keys: q, stageBytes, valid, rowMax, rowSum, barriers, fp8Scales, used });
}
