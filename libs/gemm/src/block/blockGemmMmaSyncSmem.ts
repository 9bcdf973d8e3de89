import type { DTypeName } from '@tilekit/numeric';
import { SmemLayoutError } from '../errors.ts';
import { makeWgmmaSmemLayout, type OperandMajor, type WgmmaSmemLayout } from '../smemLayouts.ts';
import type { WgmmaSwizzle } from '../warp/wgmmaDescriptor.ts';

/** Arguments of {@link makeLdmatrixSmemLayout}. */
export interface LdmatrixSmemLayoutSpec {
  /** A 16-bit element type (ldmatrix moves `.b16`). */
  readonly dtype: DTypeName;
  /** M (operand A) or N (operand B) extent of the tile. */
  readonly mn: number;
  /** K extent of the tile. */
  readonly k: number;
  /** Contiguous dim in shared memory: `K` (read with ldmatrix) or `MN` (read with ldmatrix `.trans`). */
  readonly major: OperandMajor;
}

/**
 * The XOR-swizzled shared-memory layout of one sm_80 GEMM operand tile, read by `ldmatrix` and
 * written by 16-byte `cp.async`: the swizzle atom of the layout library's `xor` transform (the
 * same 8-row × W-byte atoms as {@link makeWgmmaSmemLayout}), with W the contiguous extent in bytes
 * capped at 128 (32, 64 or 128). Within a 128-byte line the 16-byte chunk index is XORed with the
 * line index, so the 8 rows one ldmatrix 8×8 matrix reads (8 consecutive rows, one logical chunk)
 * land in 8 different 16-byte bank groups. Requires a contiguous extent of at least 32 bytes and a
 * power of two up to 128 bytes or a multiple of 128 bytes, and a strided extent that is a multiple
 * of 8. Postcondition (property-tested): a bijection onto the tile, and {@link ldmatrixBankGroups}
 * of every 8-row, one-chunk read are 8 distinct groups.
 */
export function makeLdmatrixSmemLayout(spec: LdmatrixSmemLayoutSpec): WgmmaSmemLayout {
  const { dtype, mn, k, major } = spec;
  if (dtype !== 'fp16' && dtype !== 'bf16')
    throw new SmemLayoutError('makeLdmatrixSmemLayout dtype', 'must be fp16 or bf16 (ldmatrix .b16)', String(dtype));
  if (major !== 'K' && major !== 'MN') throw new SmemLayoutError('makeLdmatrixSmemLayout major', 'must be "K" or "MN"', String(major));
  const contiguous = major === 'K' ? k : mn;
  const bytes = contiguous * 2;
  const swizzle: WgmmaSwizzle | undefined =
    bytes >= 128 && bytes % 128 === 0 ? '128B' : bytes === 64 ? '64B' : bytes === 32 ? '32B' : undefined;
  if (swizzle === undefined) {
    throw new SmemLayoutError(
      `makeLdmatrixSmemLayout ${major === 'K' ? 'k' : 'mn'}`,
      'the contiguous extent must be 16, 32 or a multiple of 64 two-byte elements',
      String(contiguous),
    );
  }
  return makeWgmmaSmemLayout({ swizzle, dtype, mn, k, major });
}

/**
 * The 16-byte bank groups (byte address / 16 mod 8: the 8 groups of 4 banks) that the 8 rows of one
 * ldmatrix 8×8 matrix touch when it starts at (mn0, k0) of `layout` (the tile based at a
 * `repeatBytes`-aligned address). rows are the strided dim, the chunk is 8 contiguous elements.
 * Eight distinct values = one conflict-free shared-memory wavefront.
 */
export function ldmatrixBankGroups(layout: WgmmaSmemLayout, mn0: number, k0: number): number[] {
  const out: number[] = [];
  for (let r = 0; r < 8; r++) {
    const [mn, kk] = layout.major === 'K' ? [mn0 + r, k0] : [mn0, k0 + r];
    out.push(Math.floor((layout.descriptor.calculateOffset([mn, kk]) * layout.elementBytes) / 16) % 8);
  }
  return out;
}
