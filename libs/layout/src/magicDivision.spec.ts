import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { magicDivide, magicNumbers, MAGIC_DIVISION_MAX_DIVIDEND, mulhi32 } from './magicDivision.ts';

const big = (n: number, d: number): number => Number(BigInt(n) / BigInt(d));
const dividend = fc.oneof(
  fc.integer({ min: 0, max: MAGIC_DIVISION_MAX_DIVIDEND }),
  fc.integer({ min: 2 ** 31 - 4096, max: 2 ** 31 - 1 }),
  fc.nat(4096),
);
const divisor = fc.oneof(
  fc.integer({ min: 1, max: 2 ** 31 - 1 }),
  fc.integer({ min: 1, max: 1024 }),
  fc.integer({ min: 0, max: 30 }).chain((k) => fc.constantFrom(2 ** k - 1, 2 ** k, 2 ** k + 1).filter((d) => d >= 1 && d < 2 ** 31)),
);

describe('magic division', () => {
  test.prop([dividend, divisor], { numRuns: 2000 })('is exact for 0 ≤ n ≤ 2^31 − 1 and 1 ≤ d ≤ 2^31 − 1', (n, d) => {
    expect(magicDivide(n, magicNumbers(d))).toBe(big(n, d));
  });

  test.prop([fc.integer({ min: 0, max: 2 ** 32 - 1 }), fc.integer({ min: 0, max: 2 ** 32 - 1 })])(
    'mulhi32 is the exact high word',
    (n, m) => {
      expect(mulhi32(n, m)).toBe(Number((BigInt(n) * BigInt(m)) >> 32n));
    },
  );

  it('covers the edges of the documented range exhaustively for small divisors', () => {
    for (let d = 1; d <= 300; d++) {
      const magic = magicNumbers(d);
      expect(magic.multiplier).toBeLessThan(2 ** 32);
      for (const n of [0, 1, d - 1, d, d + 1, 2 ** 31 - 1, 2 ** 31 - 2, 2 ** 31 - d]) {
        if (n >= 0) expect(magicDivide(n, magic)).toBe(big(n, d));
      }
    }
    expect(magicNumbers(1)).toEqual({ multiplier: 1, shift: 0 });
    expect(magicNumbers(2 ** 31 - 1).shift).toBe(31);
  });

  it('is not exact beyond the range (why emission checks dividend bounds)', () => {
    // n ≥ 2^31 overflows the 32-bit sum for some divisors.
    let failures = 0;
    for (let d = 3; d < 200; d += 2) if (magicDivide(2 ** 32 - 1, magicNumbers(d)) !== big(2 ** 32 - 1, d)) failures++;
    expect(failures).toBeGreaterThan(0);
  });

  it('rejects divisors outside [1, 2^31 − 1]', () => {
    expect(() => magicNumbers(0)).toThrow(expect.objectContaining({ code: 'layout/invalid-parameter' }));
    expect(() => magicNumbers(2 ** 31)).toThrow(expect.objectContaining({ code: 'layout/invalid-parameter' }));
  });
});
