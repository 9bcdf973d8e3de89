import { getDType, type DTypeName } from '@tilekit/numeric';
import {
  makeNaiveTensorDescriptorPacked,
  merge,
  passThrough,
  transformTensorDescriptor,
  xor,
  type TensorDescriptor,
} from '@tilekit/layout';
import { SmemLayoutError } from './errors.ts';
import { wgmmaSwizzleModes, type WgmmaDescriptorFields, type WgmmaSwizzle } from './warp/wgmmaDescriptor.ts';

/** Which dim of a wgmma operand tile is contiguous in shared memory (PTX ISA 9.7.15.5.1.2). */
export type OperandMajor = 'K' | 'MN';

/** Arguments of {@link makeWgmmaSmemLayout}. */
export interface WgmmaSmemLayoutSpec {
  readonly swizzle: WgmmaSwizzle;
  readonly dtype: DTypeName;
  /** M (operand A) or N (operand B) extent of the tile. */
  readonly mn: number;
  /** K extent of the tile. */
  readonly k: number;
  /** Contiguous dim (default `K`: K-major, wgmma's imm-trans = 0). */
  readonly major?: OperandMajor;
}

/** A shared-memory tile layout for a wgmma operand, with what its matrix descriptor needs. */
export interface WgmmaSmemLayout {
  readonly swizzle: WgmmaSwizzle;
  readonly dtype: DTypeName;
  readonly major: OperandMajor;
  readonly mn: number;
  readonly k: number;
  readonly elementBytes: number;
  /** (mn, k) → element offset from the tile base; a bijection onto [0, mn·k). */
  readonly descriptor: TensorDescriptor;
  /** The swizzle width in bytes (128, 64, 32; 16 for `none`: one core-matrix row). */
  readonly swizzleBytes: number;
  /** Bytes after which the swizzle pattern repeats (8 rows of `swizzleBytes`); the tile base must be aligned to it for base offset 0. */
  readonly repeatBytes: number;
  /** Bytes of the whole tile. */
  readonly bytes: number;
  /**
   * Descriptor byte offsets (PTX ISA 9.7.15.5.1.2.1 "Strides", CUTLASS's canonical GMMA layouts).
   * K-major: swizzled modes use SBO = 8 rows · swizzleBytes (the next 8 M/N rows) and ignore LBO
   * (set to 16: encoded 1, as CUTLASS does) because one wgmma K step (16 elements, ≤ 32 bytes) lies
   * inside one swizzle atom; `none` has LBO = mn · 16 (the next core matrix along K) and SBO = 128
   * (the next 8 M/N rows). MN-major: swizzled modes use LBO = k · swizzleBytes (the next
   * swizzleBytes-wide slab along M/N: the ISA's "next (swizzle-byte-size/16) rows" of 16-byte
   * units) and SBO = 8 · swizzleBytes (the next 8 K rows); `none` has LBO = 128 (the next 8 K rows)
   * and SBO = k · 16 (the next 8 M/N elements).
   */
  readonly leadingByteOffset: number;
  readonly strideByteOffset: number;
  /**
   * M/N elements one descriptor start address may be offset by inside the tile (`wgmmaOperandDescriptor`'s
   * mn0 granularity): 8 rows for K-major; for MN-major the slab width (swizzleBytes / elementBytes,
   * or one 16-byte chunk for `none`).
   */
  readonly mnGranularity: number;
}

const swizzleWidth: Record<WgmmaSwizzle, number> = { none: 16, '128B': 128, '64B': 64, '32B': 32 };

/**
 * The canonical shared-memory layout of a wgmma operand tile (PTX ISA 9.7.15.5.1.2, Table 38:
 * "swizzle layout atoms" of 8 rows × W bytes, W = 128/64/32, made of 16-byte chunks), as a
 * `@tilekit/layout` descriptor built with `xor`. With the contiguous dim c (K for K-major) and
 * the strided dim r, e = 16 / elementBytes elements per chunk:
 * - swizzled: atoms tile the contiguous dim outermost; inside one, row r sits at r·W bytes and
 *   chunk q of it is stored at chunk q XOR (⌊r / (128/W)⌋ mod (W/16)): i.e. on byte addresses
 *   bits [4, 4+log2(W/16)) are XORed with bits [7, 7+log2(W/16)) (CUTLASS `Swizzle<B,4,3>`), for
 *   128B simply chunk XOR (row mod 8).
 * - `none`: 8×16-byte core matrices, each contiguous (128 bytes), 8-row groups next along the
 *   strided dim, then core-matrix columns along the contiguous dim.
 * Requires the strided extent a multiple of 8 and the contiguous extent a multiple of W bytes.
 * One-byte elements (int8 for `wgmma m64nNk32.s32.s8.s8`, fp8 for `m64nNk32.f32.e4m3.e4m3` /
 * `.e5m2.e5m2`): a K-major `mn × 128` tile with 128B or an `mn × 64` tile with 64B is exactly
 * what TMA writes for a box [k, mn] with
 * `CU_TENSOR_MAP_SWIZZLE_128B` / `_64B` into a `repeatBytes`-aligned destination (tested cell by cell).
 * Postconditions (property-tested): a bijection of the tile onto [0, mn·k); the XOR pattern above
 * on byte addresses when the base is `repeatBytes`-aligned.
 */
export function makeWgmmaSmemLayout(spec: WgmmaSmemLayoutSpec): WgmmaSmemLayout {
  const { swizzle, dtype, mn, k } = spec;
  const major = spec.major ?? 'K';
  if (!wgmmaSwizzleModes.includes(swizzle))
    throw new SmemLayoutError('makeWgmmaSmemLayout swizzle', `must be one of ${wgmmaSwizzleModes.join(', ')}`, String(swizzle));
  if (major !== 'K' && major !== 'MN') throw new SmemLayoutError('makeWgmmaSmemLayout major', 'must be "K" or "MN"', String(major));
  const d = getDType(dtype);
  if (d.bits < 8 || 128 % d.bits !== 0)
    throw new SmemLayoutError('makeWgmmaSmemLayout dtype', 'elements must be 1, 2, 4, 8 or 16 bytes', dtype);
  const elementBytes = d.bits / 8;
  const e = 16 / elementBytes;
  const [rows, cols] = major === 'K' ? [mn, k] : [k, mn];
  const rowName = major === 'K' ? 'mn' : 'k';
  const colName = major === 'K' ? 'k' : 'mn';
  const w = swizzleWidth[swizzle];
  if (!Number.isSafeInteger(rows) || rows <= 0 || rows % 8 !== 0)
    throw new SmemLayoutError(
      `makeWgmmaSmemLayout ${rowName}`,
      'the strided extent must be a positive multiple of 8 (rows of a swizzle atom)',
      String(rows),
    );
  const colElems = w / elementBytes;
  if (!Number.isSafeInteger(cols) || cols <= 0 || cols % colElems !== 0) {
    throw new SmemLayoutError(
      `makeWgmmaSmemLayout ${colName}`,
      `the contiguous extent must be a positive multiple of ${colElems} ${dtype} elements (${w} bytes)`,
      String(cols),
    );
  }
  let desc: TensorDescriptor;
  if (swizzle === 'none') {
    // [core-matrix column, 8-row group, row in group, element in chunk]
    const base = makeNaiveTensorDescriptorPacked([cols / e, rows / 8, 8, e]);
    desc = transformTensorDescriptor(
      base,
      [merge([rows / 8, 8]), merge([cols / e, e])],
      [
        [1, 2],
        [0, 3],
      ],
      [[0], [1]],
    );
  } else {
    const chunks = w / 16;
    const rowLo = 128 / w; // rows sharing one 128-byte line: the XOR source is the line index
    const rowHi = rows / rowLo;
    // [atom column, line, row in line, chunk, element in chunk]
    const base = makeNaiveTensorDescriptorPacked([cols / colElems, rowHi, rowLo, chunks, e]);
    const swz = transformTensorDescriptor(
      base,
      [passThrough(cols / colElems), xor([rowHi, chunks]), passThrough(rowLo), passThrough(e)],
      [[0], [1, 3], [2], [4]],
      [[0], [1, 3], [2], [4]],
    );
    desc = transformTensorDescriptor(
      swz,
      [merge([rowHi, rowLo]), merge([cols / colElems, chunks, e])],
      [
        [1, 2],
        [0, 3, 4],
      ],
      [[0], [1]],
    );
  }
  if (major === 'MN') desc = transformTensorDescriptor(desc, [passThrough(rows), passThrough(cols)], [[0], [1]], [[1], [0]]);
  const kMajor = major === 'K';
  const offsets = kMajor
    ? swizzle === 'none'
      ? { lbo: rows * 16, sbo: 128 }
      : { lbo: 16, sbo: 8 * w }
    : swizzle === 'none'
      ? { lbo: 128, sbo: rows * 16 }
      : { lbo: rows * w, sbo: 8 * w };
  return {
    swizzle,
    dtype,
    major,
    mn,
    k,
    elementBytes,
    descriptor: desc,
    swizzleBytes: w,
    repeatBytes: 8 * w,
    bytes: mn * k * elementBytes,
    leadingByteOffset: offsets.lbo,
    strideByteOffset: offsets.sbo,
    mnGranularity: kMajor ? 8 : swizzle === 'none' ? e : colElems,
  };
}

/** Where a wgmma operand sub-tile starts inside a {@link WgmmaSmemLayout} tile. */
export interface WgmmaOperandOrigin {
  /** Shared-window byte address of the tile; a multiple of `repeatBytes` (so the base offset is 0). */
  readonly tileAddress: number;
  /** First M/N row of the sub-tile: a multiple of the layout's `mnGranularity` (default 0). */
  readonly mn0?: number;
  /**
   * First K column of the sub-tile (default 0). K-major: a multiple of 16 bytes whose K slice
   * (`k` elements) does not straddle a swizzle atom; MN-major: a multiple of 8 (one 8-row K group).
   */
  readonly k0?: number;
  /** The instruction's K extent in elements (default 16: wgmma m64nNk16); MN-major: a multiple of 8. */
  readonly k?: number;
}

/**
 * The descriptor fields (for `encodeWgmmaDescriptor`) of the wgmma operand sub-tile that starts at
 * (mn0, k0) of a tile laid out by {@link makeWgmmaSmemLayout}: the start address is the tile
 * address plus the byte offset of (mn0, k0) — unswizzled there: K-major because mn0 is a multiple
 * of 8, MN-major because mn0 starts a slab and k0 an 8-row group — with the layout's LBO/SBO and
 * swizzle, base offset 0. This is how the block layer steps through K (k0 += 16) and M/N (mn0 += 64
 * or N). Postcondition (property-tested): the address the descriptor names for sub-tile element
 * (i, j), i.e. with S = swizzleBytes / bytes and e = 16 / bytes
 * - K-major swizzled: start + ⌊i/8⌋·SBO + (i mod 8)·W + j·bytes, then bits [4, …) XOR bits [7, …);
 * - K-major `none`: start + ⌊i/8⌋·SBO + (i mod 8)·16 + ⌊j/e⌋·LBO + (j mod e)·bytes;
 * - MN-major swizzled: start + ⌊i/S⌋·LBO + (i mod S)·bytes + ⌊j/8⌋·SBO + (j mod 8)·W, then the XOR;
 * - MN-major `none`: start + ⌊i/e⌋·SBO + (i mod e)·bytes + ⌊j/8⌋·LBO + (j mod 8)·16;
 * equals tileAddress + the layout's offset of (mn0 + i, k0 + j).
 */
export function wgmmaOperandDescriptor(layout: WgmmaSmemLayout, origin: WgmmaOperandOrigin): WgmmaDescriptorFields {
  const { tileAddress } = origin;
  const mn0 = origin.mn0 ?? 0;
  const k0 = origin.k0 ?? 0;
  const k = origin.k ?? 16;
  if (!Number.isSafeInteger(tileAddress) || tileAddress < 0 || tileAddress % layout.repeatBytes !== 0) {
    throw new SmemLayoutError(
      'wgmmaOperandDescriptor tileAddress',
      `must be a multiple of ${layout.repeatBytes} bytes (the ${layout.swizzle} pattern repeat, for base offset 0)`,
      String(tileAddress),
    );
  }
  const g = layout.mnGranularity;
  if (!Number.isSafeInteger(mn0) || mn0 < 0 || mn0 % g !== 0 || mn0 >= layout.mn) {
    throw new SmemLayoutError(
      'wgmmaOperandDescriptor mn0',
      `must be a multiple of ${g} in [0, ${layout.mn}) (${layout.major}-major ${layout.swizzle})`,
      String(mn0),
    );
  }
  const e = 16 / layout.elementBytes;
  if (layout.major === 'MN') {
    // K runs along the strided dim: the slice is whole 8-row groups (SBO / LBO steps between them).
    if (!Number.isSafeInteger(k) || k <= 0 || k % 8 !== 0)
      throw new SmemLayoutError('wgmmaOperandDescriptor k', 'must be a positive multiple of 8 (MN-major: whole 8-row K groups)', String(k));
    if (!Number.isSafeInteger(k0) || k0 < 0 || k0 % 8 !== 0 || k0 + k > layout.k) {
      throw new SmemLayoutError(
        'wgmmaOperandDescriptor k0',
        `must be a multiple of 8 with [k0, k0 + ${k}) inside [0, ${layout.k})`,
        String(k0),
      );
    }
  } else {
    const atomElems = layout.swizzle === 'none' ? e : layout.swizzleBytes / layout.elementBytes;
    if (!Number.isSafeInteger(k) || k <= 0 || (layout.swizzle !== 'none' && k > atomElems) || (layout.swizzle === 'none' && k % e !== 0)) {
      throw new SmemLayoutError(
        'wgmmaOperandDescriptor k',
        layout.swizzle === 'none' ? `must be a positive multiple of ${e}` : `must be in [1, ${atomElems}] (one swizzle atom wide)`,
        String(k),
      );
    }
    const sameAtom = layout.swizzle === 'none' || Math.floor(k0 / atomElems) === Math.floor((k0 + k - 1) / atomElems);
    if (!Number.isSafeInteger(k0) || k0 < 0 || k0 + k > layout.k || k0 % e !== 0 || !sameAtom) {
      throw new SmemLayoutError(
        'wgmmaOperandDescriptor k0',
        `must be a multiple of ${e} with [k0, k0 + ${k}) inside [0, ${layout.k}) and inside one ${layout.swizzle} atom`,
        String(k0),
      );
    }
  }
  return {
    startAddress: tileAddress + layout.descriptor.calculateOffset([mn0, k0]) * layout.elementBytes,
    leadingByteOffset: layout.leadingByteOffset,
    strideByteOffset: layout.strideByteOffset,
    baseOffset: 0,
    swizzle: layout.swizzle,
  };
}
