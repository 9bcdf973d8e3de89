import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SmemLayoutError } from '../errors.ts';
import { ldmatrixBankGroups, makeLdmatrixSmemLayout } from './blockGemmMmaSyncSmem.ts';

const specArb = fc.record({
  dtype: fc.constantFrom('fp16' as const, 'bf16' as const),
  major: fc.constantFrom('K' as const, 'MN' as const),
  strided: fc.integer({ min: 1, max: 8 }).map((x) => 8 * x),
  contiguous: fc.constantFrom(16, 32, 64, 128, 192),
});

describe('makeLdmatrixSmemLayout (XOR-swizzled operand tiles for ldmatrix / cp.async)', () => {
  it('is a bijection onto the tile, and every ldmatrix 8×8 read (8 rows, one 16-byte chunk) hits 8 distinct bank groups', () => {
    fc.assert(
      fc.property(specArb, ({ dtype, major, strided, contiguous }) => {
        const [mn, k] = major === 'K' ? [strided, contiguous] : [contiguous, strided];
        const l = makeLdmatrixSmemLayout({ dtype, mn, k, major });
        const seen = new Set<number>();
        for (let i = 0; i < mn; i++) for (let j = 0; j < k; j++) seen.add(l.descriptor.calculateOffset([i, j]));
        expect(seen.size).toBe(mn * k);
        expect(Math.max(...seen)).toBe(mn * k - 1);
        for (let r0 = 0; r0 < strided; r0 += 8) {
          for (let c0 = 0; c0 < contiguous; c0 += 8) {
            const groups = major === 'K' ? ldmatrixBankGroups(l, r0, c0) : ldmatrixBankGroups(l, c0, r0);
            if (new Set(groups).size !== 8) return false;
          }
        }
        return true;
      }),
    );
  });

  it('swizzle width follows the contiguous row: 32, 64, 128 bytes; 128B for wider rows', () => {
    expect(makeLdmatrixSmemLayout({ dtype: 'fp16', mn: 128, k: 16, major: 'K' }).swizzle).toBe('32B');
    expect(makeLdmatrixSmemLayout({ dtype: 'fp16', mn: 128, k: 32, major: 'K' }).swizzle).toBe('64B');
    expect(makeLdmatrixSmemLayout({ dtype: 'bf16', mn: 128, k: 32, major: 'MN' }).swizzle).toBe('128B');
    // Without the swizzle (row-major 64-byte rows) 8 rows of one chunk hit only 2 bank groups: the XOR is what helps.
    const plain = (r: number): number => Math.floor((r * 64) / 16) % 8;
    expect(new Set([0, 1, 2, 3, 4, 5, 6, 7].map(plain)).size).toBe(2);
  });

  it('rejects shapes without a swizzle atom', () => {
    expect(() => makeLdmatrixSmemLayout({ dtype: 'fp16', mn: 128, k: 24, major: 'K' })).toThrow(SmemLayoutError);
    expect(() => makeLdmatrixSmemLayout({ dtype: 'fp32', mn: 128, k: 32, major: 'K' })).toThrow(/fp16 or bf16/);
    expect(() => makeLdmatrixSmemLayout({ dtype: 'fp16', mn: 12, k: 32, major: 'K' })).toThrow(SmemLayoutError);
  });
});
