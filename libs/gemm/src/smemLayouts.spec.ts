import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { SmemLayoutError } from './errors.ts';
import { makeWgmmaSmemLayout, wgmmaOperandDescriptor, type WgmmaSmemLayout } from './smemLayouts.ts';
import { decodeWgmmaDescriptor, encodeWgmmaDescriptor } from './warp/wgmmaDescriptor.ts';
import type { WgmmaSwizzle } from './warp/wgmmaDescriptor.ts';

/** Every (mn, k) of the tile with its element offset. */
function offsets(l: WgmmaSmemLayout): { mn: number; k: number; offset: number }[] {
  const out: { mn: number; k: number; offset: number }[] = [];
  for (let i = 0; i < l.mn; i++) for (let j = 0; j < l.k; j++) out.push({ mn: i, k: j, offset: l.descriptor.calculateOffset([i, j]) });
  return out;
}

const log2 = (x: number): number => Math.log2(x);

/** CUTLASS Swizzle<B, 4, 3> on byte addresses: bits [4, 4+B) ^= bits [7, 7+B), B = log2(W / 16). */
function swizzleAddress(swizzle: WgmmaSwizzle, byte: number): number {
  if (swizzle === 'none') return byte;
  const bits = log2({ '128B': 128, '64B': 64, '32B': 32 }[swizzle] / 16);
  const mask = (1 << bits) - 1;
  return byte ^ (((byte >> 7) & mask) << 4);
}

const swizzled = ['128B', '64B', '32B'] as const;
const dtypes = ['fp16', 'bf16', 'fp32', 'fp8e4m3fn'] as const;

const layoutArb = fc
  .record({
    swizzle: fc.constantFrom<WgmmaSwizzle>('none', '128B', '64B', '32B'),
    dtype: fc.constantFrom(...dtypes),
    major: fc.constantFrom('K' as const, 'MN' as const),
    strided: fc.integer({ min: 1, max: 4 }),
    contiguous: fc.integer({ min: 1, max: 3 }),
  })
  .map(({ swizzle, dtype, major, strided, contiguous }) => {
    const bytes = dtype === 'fp32' ? 4 : dtype === 'fp8e4m3fn' ? 1 : 2;
    const w = { none: 16, '128B': 128, '64B': 64, '32B': 32 }[swizzle];
    const rows = 8 * strided;
    const cols = (contiguous * w) / bytes;
    return major === 'K' ? { swizzle, dtype, major, mn: rows, k: cols } : { swizzle, dtype, major, mn: cols, k: rows };
  });

describe('wgmma shared-memory layouts (PTX ISA 9.7.15.5.1.2)', () => {
  test.prop([layoutArb], { numRuns: 40 })('bijection of the tile onto [0, mn·k)', (spec) => {
    const l = makeWgmmaSmemLayout(spec);
    const seen = new Set(offsets(l).map((o) => o.offset));
    expect(seen.size).toBe(l.mn * l.k);
    expect(Math.min(...seen)).toBe(0);
    expect(Math.max(...seen)).toBe(l.mn * l.k - 1);
    expect(l.bytes).toBe(l.mn * l.k * l.elementBytes);
  });

  test.prop([layoutArb.filter((s) => s.swizzle !== 'none')], { numRuns: 40 })(
    'swizzled = the unswizzled atom layout with byte-address bits [4,4+B) XOR bits [7,7+B) (CUTLASS Swizzle<B,4,3>)',
    (spec) => {
      const l = makeWgmmaSmemLayout(spec);
      const w = l.swizzleBytes;
      const e = l.elementBytes;
      const rows = l.major === 'K' ? l.mn : l.k;
      for (const o of offsets(l)) {
        const [r, c] = l.major === 'K' ? [o.mn, o.k] : [o.k, o.mn];
        // Unswizzled: atoms of W bytes along the contiguous dim outermost, rows of W bytes inside.
        const atomCol = Math.floor((c * e) / w);
        const plain = atomCol * rows * w + r * w + ((c * e) % w);
        expect(o.offset * e).toBe(swizzleAddress(l.swizzle, plain));
      }
    },
  );

  it('128B: the 16-byte chunk index is XORed with (row mod 8), rows of 128 bytes', () => {
    const l = makeWgmmaSmemLayout({ swizzle: '128B', dtype: 'fp16', mn: 64, k: 64 });
    for (let r = 0; r < 64; r++)
      for (let c = 0; c < 64; c++) {
        const chunk = c >> 3;
        expect(l.descriptor.calculateOffset([r, c])).toBe(r * 64 + ((chunk ^ (r % 8)) << 3) + (c % 8));
      }
    // Row 1: chunks 0..7 land in 1,0,3,2,5,4,7,6 (Figure "K major 128B swizzling").
    expect([0, 1, 2, 3, 4, 5, 6, 7].map((q) => (l.descriptor.calculateOffset([1, q * 8]) - 64) / 8)).toEqual([1, 0, 3, 2, 5, 4, 7, 6]);
  });

  it('64B: rows of 64 bytes, chunk XOR (⌊row/2⌋ mod 4); 32B: rows of 32 bytes, chunk XOR (⌊row/4⌋ mod 2)', () => {
    const l64 = makeWgmmaSmemLayout({ swizzle: '64B', dtype: 'bf16', mn: 16, k: 32 });
    const l32 = makeWgmmaSmemLayout({ swizzle: '32B', dtype: 'bf16', mn: 16, k: 16 });
    for (let r = 0; r < 16; r++) {
      for (let c = 0; c < 32; c++)
        expect(l64.descriptor.calculateOffset([r, c])).toBe(r * 32 + (((c >> 3) ^ ((r >> 1) % 4)) << 3) + (c % 8));
      for (let c = 0; c < 16; c++)
        expect(l32.descriptor.calculateOffset([r, c])).toBe(r * 16 + (((c >> 3) ^ ((r >> 2) % 2)) << 3) + (c % 8));
    }
  });

  it('none: 8×16-byte core matrices, each contiguous; LBO = mn·16 along K, SBO = 128 along M/N', () => {
    const l = makeWgmmaSmemLayout({ swizzle: 'none', dtype: 'fp16', mn: 64, k: 16 });
    for (let r = 0; r < 64; r++)
      for (let c = 0; c < 16; c++)
        expect(l.descriptor.calculateOffset([r, c]) * 2).toBe(
          (c >> 3) * l.leadingByteOffset + (r >> 3) * l.strideByteOffset + (r % 8) * 16 + (c % 8) * 2,
        );
    expect([l.leadingByteOffset, l.strideByteOffset]).toEqual([64 * 16, 128]);
  });

  it('descriptor byte offsets and repeat boundaries per swizzle mode (K-major)', () => {
    const table = swizzled.map((swizzle) => {
      const l = makeWgmmaSmemLayout({ swizzle, dtype: 'fp16', mn: 64, k: 64 });
      return [l.swizzleBytes, l.repeatBytes, l.leadingByteOffset, l.strideByteOffset];
    });
    // Repeat boundaries: 1024 / 512 / 256 bytes (PTX ISA "Matrix Descriptor Format", base offset).
    expect(table).toEqual([
      [128, 1024, 16, 1024],
      [64, 512, 16, 512],
      [32, 256, 16, 256],
    ]);
  });

  it('descriptor byte offsets per swizzle mode (MN-major): LBO = the next W-byte slab along M/N (k·W), SBO = the next 8 K rows (8·W); none: LBO = 128 along K, SBO = k·16 along M/N', () => {
    const table = (['128B', '64B', '32B', 'none'] as const).map((swizzle) => {
      const l = makeWgmmaSmemLayout({ swizzle, dtype: 'bf16', mn: 256, k: 64, major: 'MN' });
      return [l.leadingByteOffset, l.strideByteOffset, l.mnGranularity];
    });
    expect(table).toEqual([
      [64 * 128, 1024, 64],
      [64 * 64, 512, 32],
      [64 * 32, 256, 16],
      [128, 64 * 16, 8],
    ]);
    expect(makeWgmmaSmemLayout({ swizzle: '128B', dtype: 'fp16', mn: 64, k: 64 }).mnGranularity).toBe(8);
  });

  it('MN-major is the same physical layout with the contiguous dim M/N', () => {
    const k = makeWgmmaSmemLayout({ swizzle: '128B', dtype: 'fp16', mn: 16, k: 64 });
    const mn = makeWgmmaSmemLayout({ swizzle: '128B', dtype: 'fp16', mn: 64, k: 16, major: 'MN' });
    for (let i = 0; i < 16; i++)
      for (let j = 0; j < 64; j++) expect(mn.descriptor.calculateOffset([j, i])).toBe(k.descriptor.calculateOffset([i, j]));
  });

  it('rejects shapes the swizzle atom cannot tile', () => {
    expect(() => makeWgmmaSmemLayout({ swizzle: '128B', dtype: 'fp16', mn: 12, k: 64 })).toThrow(SmemLayoutError);
    expect(() => makeWgmmaSmemLayout({ swizzle: '128B', dtype: 'fp16', mn: 64, k: 32 })).toThrow(
      /multiple of 64 fp16 elements \(128 bytes\)/,
    );
    expect(() => makeWgmmaSmemLayout({ swizzle: '64B', dtype: 'fp16', mn: 64, k: 12, major: 'MN' })).toThrow(/k: the strided extent/);
  });

  const operandArb = layoutArb
    .filter((s) => s.major === 'K' && s.k * (s.dtype === 'fp32' ? 4 : s.dtype === 'fp8e4m3fn' ? 1 : 2) >= 32)
    .chain((spec) => {
      const l = makeWgmmaSmemLayout(spec);
      const k = 32 / l.elementBytes; // one wgmma K step is 32 bytes (k16 for 16-bit, k8 tf32, k32 fp8)
      const e = 16 / l.elementBytes;
      const atom = l.swizzle === 'none' ? l.k : l.swizzleBytes / l.elementBytes;
      const k0s = Array.from({ length: l.k / e }, (_, q) => q * e).filter(
        (k0) => k0 + k <= l.k && Math.floor(k0 / atom) === Math.floor((k0 + k - 1) / atom),
      );
      return fc.record({
        l: fc.constant(l),
        k: fc.constant(k),
        mn0: fc.integer({ min: 0, max: l.mn / 8 - 1 }).map((x) => x * 8),
        k0: fc.constantFrom(...k0s),
        tileAddress: fc.integer({ min: 0, max: 8 }).map((x) => x * l.repeatBytes),
      });
    });

  test.prop([operandArb], { numRuns: 60 })(
    "wgmmaOperandDescriptor: the address wgmma derives from the descriptor for every sub-tile element is the layout's",
    ({ l, k, mn0, k0, tileAddress }) => {
      const f = wgmmaOperandDescriptor(l, { tileAddress, mn0, k0, k });
      expect(decodeWgmmaDescriptor(encodeWgmmaDescriptor(f))).toEqual(f);
      const e = 16 / l.elementBytes;
      const rows = Math.min(64, l.mn - mn0);
      for (let i = 0; i < rows; i++)
        for (let j = 0; j < k; j++) {
          const hw =
            l.swizzle === 'none'
              ? f.startAddress +
                Math.floor(i / 8) * f.strideByteOffset +
                (i % 8) * 16 +
                Math.floor(j / e) * f.leadingByteOffset +
                (j % e) * l.elementBytes
              : swizzleAddress(
                  l.swizzle,
                  f.startAddress + Math.floor(i / 8) * f.strideByteOffset + (i % 8) * l.swizzleBytes + j * l.elementBytes,
                );
          expect(hw).toBe(tileAddress + l.descriptor.calculateOffset([mn0 + i, k0 + j]) * l.elementBytes);
        }
    },
  );

  /**
   * How wgmma addresses an MN-major operand (PTX ISA 9.7.15.5.1.2.1 "Strides"; CUTLASS's canonical
   * MN-major GMMA layouts ((T,W/16,m),(8,k)) : ((1,T,LBO),(W/16·T,SBO)) in 16-byte units T):
   * M/N elements contiguous inside a W-byte row, LBO between W-byte slabs along M/N, K rows W bytes
   * apart inside an 8-row group, SBO between groups; then the swizzle XOR on the absolute address.
   * `none`: 8 M/N elements × 8 K rows core matrices of 128 bytes, SBO along M/N, LBO along K.
   */
  function mnMajorAddress(l: WgmmaSmemLayout, start: number, lbo: number, sbo: number, i: number, j: number): number {
    const eb = l.elementBytes;
    if (l.swizzle === 'none') {
      const e = 16 / eb;
      return start + Math.floor(i / e) * sbo + (i % e) * eb + Math.floor(j / 8) * lbo + (j % 8) * 16;
    }
    const slab = l.swizzleBytes / eb;
    return swizzleAddress(
      l.swizzle,
      start + Math.floor(i / slab) * lbo + (i % slab) * eb + Math.floor(j / 8) * sbo + (j % 8) * l.swizzleBytes,
    );
  }

  const mnOperandArb = layoutArb
    .filter((s) => s.major === 'MN' && s.k >= 16)
    .chain((spec) => {
      const l = makeWgmmaSmemLayout(spec);
      return fc.record({
        l: fc.constant(l),
        k: fc.constantFrom(8, 16),
        mn0: fc.integer({ min: 0, max: l.mn / l.mnGranularity - 1 }).map((x) => x * l.mnGranularity),
        k0: fc.integer({ min: 0, max: l.k / 8 - 2 }).map((x) => x * 8),
        tileAddress: fc.integer({ min: 0, max: 8 }).map((x) => x * l.repeatBytes),
      });
    });

  it("wgmmaOperandDescriptor (MN-major): the address wgmma derives for every sub-tile element (all remaining M/N) is the layout's", () => {
    fc.assert(
      fc.property(mnOperandArb, ({ l, k, mn0, k0, tileAddress }) => {
        const f = wgmmaOperandDescriptor(l, { tileAddress, mn0, k0, k });
        expect(decodeWgmmaDescriptor(encodeWgmmaDescriptor(f))).toEqual(f);
        if (l.swizzle !== 'none') expect(f.startAddress % l.repeatBytes).toBe(0); // base offset 0 stays right
        for (let i = 0; i < l.mn - mn0; i++)
          for (let j = 0; j < k; j++)
            expect(mnMajorAddress(l, f.startAddress, f.leadingByteOffset, f.strideByteOffset, i, j)).toBe(
              tileAddress + l.descriptor.calculateOffset([mn0 + i, k0 + j]) * l.elementBytes,
            );
      }),
      { numRuns: 60 },
    );
  });

  it('MN-major 128B is what TMA writes for boxes of 64 M/N elements × k rows, one box per 64-wide slab; k16 steps are 2048 bytes', () => {
    // TMA, 128B swizzle, box inner extent 64 two-byte elements (128 bytes) along M/N, k rows along K,
    // box b (M/N elements [64b, 64b + 64)) stored at b · k · 128: element (mn, kk) of the tile at
    // b·k·128 + kk·128 + 16·((c / 8) XOR (kk mod 8)) + 2·(c mod 8), c = mn mod 64.
    const l = makeWgmmaSmemLayout({ swizzle: '128B', dtype: 'fp16', mn: 256, k: 64, major: 'MN' });
    for (let mn = 0; mn < 256; mn++)
      for (let kk = 0; kk < 64; kk++) {
        const c = mn % 64;
        expect(l.descriptor.calculateOffset([mn, kk]) * 2).toBe(
          Math.floor(mn / 64) * 64 * 128 + kk * 128 + 16 * (Math.floor(c / 8) ^ (kk % 8)) + 2 * (c % 8),
        );
      }
    expect([0, 16, 32, 48].map((k0) => wgmmaOperandDescriptor(l, { tileAddress: 4096, k0 }).startAddress - 4096)).toEqual([
      0, 2048, 4096, 6144,
    ]);
    expect(wgmmaOperandDescriptor(l, { tileAddress: 0, mn0: 64 }).startAddress).toBe(8192);
    expect(() => wgmmaOperandDescriptor(l, { tileAddress: 0, mn0: 8 })).toThrow(/mn0: must be a multiple of 64/);
    expect(() => wgmmaOperandDescriptor(l, { tileAddress: 0, k0: 4 })).toThrow(/k0: must be a multiple of 8/);
    expect(() => wgmmaOperandDescriptor(l, { tileAddress: 0, k0: 56 })).toThrow(/k0/);
    expect(() => wgmmaOperandDescriptor(l, { tileAddress: 0, k: 12 })).toThrow(/k: must be a positive multiple of 8/);
  });

  it('wgmmaOperandDescriptor: K steps inside a 128B atom move the start address by 32 bytes; typed errors', () => {
    const l = makeWgmmaSmemLayout({ swizzle: '128B', dtype: 'bf16', mn: 128, k: 128 });
    const at = (mn0: number, k0: number): number => wgmmaOperandDescriptor(l, { tileAddress: 2048, mn0, k0 }).startAddress;
    expect([0, 16, 32, 48].map((k0) => at(0, k0) - 2048)).toEqual([0, 32, 64, 96]);
    expect(at(64, 0) - 2048).toBe(64 * 128);
    expect(at(0, 64) - 2048).toBe(128 * 128); // the second atom column starts after all 128 rows
    expect(() => wgmmaOperandDescriptor(l, { tileAddress: 512 })).toThrow(/multiple of 1024 bytes/);
    expect(() => wgmmaOperandDescriptor(l, { tileAddress: 0, mn0: 4 })).toThrow(/mn0/);
    expect(() => wgmmaOperandDescriptor(l, { tileAddress: 0, k0: 56 })).toThrow(/inside one 128B atom/);
    expect(() => wgmmaOperandDescriptor(l, { tileAddress: 0, mn0: 128 })).toThrow(SmemLayoutError);
  });
});

describe('int8 K-major wgmma tiles as TMA writes them (box [k, rows], CU_TENSOR_MAP_SWIZZLE_128B / _64B)', () => {
  /**
   * What TMA stores for a box of `rows` × `k` int8 (inner extent k bytes = the swizzle span, the
   * tile base aligned to the 8-row repeat): row r at r·k bytes, and inside it the 16-byte chunk q
   * moved to q XOR (r mod 8) for 128B, to q XOR (⌊r/2⌋ mod 4) for 64B (CUDA Programming Guide,
   * "TMA Swizzle" patterns; PTX ISA 9.7.15.5.1.2 swizzle figures for 1-byte K-major atoms).
   */
  function tmaByte(k: 64 | 128, r: number, c: number): number {
    const q = c >> 4;
    const swizzledChunk = k === 128 ? q ^ (r % 8) : q ^ ((r >> 1) % 4);
    return r * k + (swizzledChunk << 4) + (c % 16);
  }

  const int8Arb = fc.record({ k: fc.constantFrom(64 as const, 128 as const), rows: fc.integer({ min: 1, max: 16 }).map((x) => 8 * x) });

  it('the offset function is a bijection onto the tile bytes and equals the TMA placement cell by cell', () => {
    fc.assert(
      fc.property(int8Arb, ({ k, rows }) => {
        const l = makeWgmmaSmemLayout({ swizzle: k === 128 ? '128B' : '64B', dtype: 'int8', mn: rows, k });
        expect(l.elementBytes).toBe(1);
        expect(l.bytes).toBe(rows * k);
        const seen = new Set<number>();
        for (let r = 0; r < rows; r++)
          for (let c = 0; c < k; c++) {
            const off = l.descriptor.calculateOffset([r, c]);
            expect(off).toBe(tmaByte(k, r, c));
            seen.add(off);
          }
        expect(seen.size).toBe(rows * k);
        expect(Math.min(...seen)).toBe(0);
        expect(Math.max(...seen)).toBe(rows * k - 1);
      }),
      { numRuns: 30 },
    );
  });

  it('golden cells: 128B row 1 swaps chunk pairs, 64B rows 2–3 swap chunk pairs and rows 6–7 reverse the four chunks', () => {
    const l128 = makeWgmmaSmemLayout({ swizzle: '128B', dtype: 'int8', mn: 64, k: 128 });
    expect([0, 1, 2, 3, 4, 5, 6, 7].map((q) => (l128.descriptor.calculateOffset([1, 16 * q]) - 128) / 16)).toEqual([
      1, 0, 3, 2, 5, 4, 7, 6,
    ]);
    expect(l128.descriptor.calculateOffset([7, 5])).toBe(7 * 128 + 7 * 16 + 5);
    const l64 = makeWgmmaSmemLayout({ swizzle: '64B', dtype: 'int8', mn: 64, k: 64 });
    expect([0, 1, 2, 3].map((q) => (l64.descriptor.calculateOffset([1, 16 * q]) - 64) / 16)).toEqual([0, 1, 2, 3]);
    expect([0, 1, 2, 3].map((q) => (l64.descriptor.calculateOffset([2, 16 * q]) - 128) / 16)).toEqual([1, 0, 3, 2]);
    expect([0, 1, 2, 3].map((q) => (l64.descriptor.calculateOffset([7, 16 * q]) - 448) / 16)).toEqual([3, 2, 1, 0]);
    expect(l64.descriptor.calculateOffset([8, 0])).toBe(512); // the 64B pattern repeats every 8 rows = 512 bytes
  });

  it('descriptor fields: LBO 16 (unused inside the atom), SBO = 8 rows (1024 / 512 bytes), swizzle code 1 / 2; k32 steps move 32 bytes', () => {
    const l128 = makeWgmmaSmemLayout({ swizzle: '128B', dtype: 'int8', mn: 128, k: 128 });
    const l64 = makeWgmmaSmemLayout({ swizzle: '64B', dtype: 'int8', mn: 128, k: 64 });
    expect([l128.leadingByteOffset, l128.strideByteOffset, l128.repeatBytes]).toEqual([16, 1024, 1024]);
    expect([l64.leadingByteOffset, l64.strideByteOffset, l64.repeatBytes]).toEqual([16, 512, 512]);
    const at = (l: WgmmaSmemLayout, mn0: number, k0: number): number =>
      wgmmaOperandDescriptor(l, { tileAddress: 0, mn0, k0, k: 32 }).startAddress;
    expect([0, 32, 64, 96].map((k0) => at(l128, 0, k0))).toEqual([0, 32, 64, 96]);
    expect([0, 32].map((k0) => at(l64, 0, k0))).toEqual([0, 32]);
    expect(at(l128, 64, 0)).toBe(64 * 128);
    expect(at(l64, 64, 32)).toBe(64 * 64 + 32);
    // Bits: start >> 4 at 0, LBO >> 4 = 1 at 16, SBO >> 4 at 32, swizzle at 62 (PTX ISA 9.7.15.5.1.2.2).
    expect(encodeWgmmaDescriptor(wgmmaOperandDescriptor(l128, { tileAddress: 2048, k0: 32, k: 32 }))).toBe(
      BigInt((2048 + 32) >> 4) | (1n << 16n) | (64n << 32n) | (1n << 62n),
    );
    expect(encodeWgmmaDescriptor(wgmmaOperandDescriptor(l64, { tileAddress: 1024, k0: 32, k: 32 }))).toBe(
      BigInt((1024 + 32) >> 4) | (1n << 16n) | (32n << 32n) | (2n << 62n),
    );
    // A k32 slice must stay inside one atom: k0 = 48 would straddle the 64-byte row.
    expect(() => wgmmaOperandDescriptor(l64, { tileAddress: 0, k0: 48, k: 32 })).toThrow(/inside one 64B atom/);
    expect(() => makeWgmmaSmemLayout({ swizzle: '128B', dtype: 'int8', mn: 64, k: 64 })).toThrow(
      /multiple of 128 int8 elements \(128 bytes\)/,
    );
  });

  it("wgmmaOperandDescriptor (int8, k32): the address wgmma derives for every element of a 64-row × 32 sub-tile is the layout's", () => {
    fc.assert(
      fc.property(
        int8Arb.chain(({ k, rows }) =>
          fc.record({
            l: fc.constant(makeWgmmaSmemLayout({ swizzle: k === 128 ? '128B' : '64B', dtype: 'int8', mn: rows, k })),
            mn0: fc.integer({ min: 0, max: rows / 8 - 1 }).map((x) => 8 * x),
            k0: fc.integer({ min: 0, max: k / 32 - 1 }).map((x) => 32 * x),
            base: fc.integer({ min: 0, max: 8 }),
          }),
        ),
        ({ l, mn0, k0, base }) => {
          const tileAddress = base * l.repeatBytes;
          const f = wgmmaOperandDescriptor(l, { tileAddress, mn0, k0, k: 32 });
          for (let i = 0; i < Math.min(64, l.mn - mn0); i++)
            for (let j = 0; j < 32; j++) {
              const hw = swizzleAddress(l.swizzle, f.startAddress + Math.floor(i / 8) * f.strideByteOffset + (i % 8) * l.swizzleBytes + j);
              expect(hw).toBe(tileAddress + l.descriptor.calculateOffset([mn0 + i, k0 + j]));
            }
        },
      ),
      { numRuns: 40 },
    );
  });
});
