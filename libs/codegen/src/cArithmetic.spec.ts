import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { UndefinedBehaviorError } from './errors.ts';
import { applyArithmetic, applyComparison, applyNegate, applyShift, bigintToFloat32, convertValue } from './cArithmetic.ts';
import { bool, float32, float64, int8, int32, int64, uint8, uint32, uint64 } from './cType.ts';

const ub = (f: () => unknown, kind: string): void => {
  expect(f).toThrow(UndefinedBehaviorError);
  try {
    f();
  } catch (e) {
    expect((e as UndefinedBehaviorError).kind).toBe(kind);
    expect((e as UndefinedBehaviorError).code).toBe('codegen/undefined-behavior');
  }
};

describe('C++ integer arithmetic', () => {
  it('truncates division toward zero and gives % the sign of the dividend', () => {
    expect(applyArithmetic('/', int32, -7n, 2n)).toBe(-3n);
    expect(applyArithmetic('%', int32, -7n, 2n)).toBe(-1n);
    expect(applyArithmetic('/', int32, 7n, -2n)).toBe(-3n);
    expect(applyArithmetic('%', int32, 7n, -2n)).toBe(1n);
    expect(applyArithmetic('%', int32, -7n, -2n)).toBe(-1n);
  });

  it('wraps unsigned and refuses signed overflow', () => {
    expect(applyArithmetic('+', uint32, 4294967295n, 1n)).toBe(0n);
    expect(applyArithmetic('-', uint32, 0n, 1n)).toBe(4294967295n);
    expect(applyArithmetic('*', uint64, 1n << 63n, 2n)).toBe(0n);
    ub(() => applyArithmetic('+', int32, 2147483647n, 1n), 'signed-overflow');
    ub(() => applyArithmetic('/', int32, -2147483648n, -1n), 'signed-overflow');
    ub(() => applyArithmetic('%', int32, -2147483648n, -1n), 'signed-overflow');
    ub(() => applyArithmetic('/', int32, 1n, 0n), 'division-by-zero');
    ub(() => applyArithmetic('%', uint32, 1n, 0n), 'division-by-zero');
    ub(() => applyNegate(int64, -(1n << 63n)), 'signed-overflow');
    expect(applyNegate(uint32, 1n)).toBe(4294967295n);
  });

  it('shifts like C++17 on g++/nvcc/clang', () => {
    expect(applyShift('<<', int32, 1n, 31n)).toBe(-2147483648n);
    expect(applyShift('>>', int32, -7n, 1n)).toBe(-4n);
    expect(applyShift('<<', uint32, 0xffffffffn, 4n)).toBe(0xfffffff0n);
    ub(() => applyShift('<<', int32, -1n, 1n), 'negative-left-shift');
    ub(() => applyShift('<<', int32, 3n, 31n), 'signed-overflow');
    ub(() => applyShift('>>', int32, 1n, 32n), 'shift-out-of-range');
    ub(() => applyShift('<<', uint64, 1n, -1n), 'shift-out-of-range');
  });

  it('does bitwise operations in two’s complement', () => {
    expect(applyArithmetic('&', int32, -1n, 255n)).toBe(255n);
    expect(applyArithmetic('^', int32, -1n, 0n)).toBe(-1n);
    expect(applyArithmetic('|', uint8, 0xf0n, 0x0fn)).toBe(255n);
  });

  it('a == (a / b) * b + a % b and |a % b| < |b| whenever defined', () => {
    const int = fc.bigInt({ min: -(1n << 31n), max: (1n << 31n) - 1n });
    fc.assert(
      fc.property(int, int, (a, b) => {
        if (b === 0n || (a === -(1n << 31n) && b === -1n)) return;
        const q = applyArithmetic('/', int32, a, b) as bigint;
        const m = applyArithmetic('%', int32, a, b) as bigint;
        expect(q * b + m).toBe(a);
        expect(m < 0n ? -m : m).toBeLessThan(b < 0n ? -b : b);
        expect(m === 0n || m < 0n === a < 0n).toBe(true);
      }),
    );
  });
});

describe('conversions', () => {
  it('wraps integers, truncates floats, tests bool', () => {
    expect(convertValue(-1n, uint32)).toBe(4294967295n);
    expect(convertValue(300n, int8)).toBe(44n);
    expect(convertValue(4294967295n, int32)).toBe(-1n);
    expect(convertValue(-2.9, int32)).toBe(-2n);
    expect(convertValue(2.9, uint8)).toBe(2n);
    expect(convertValue(0.5, bool)).toBe(true);
    expect(convertValue(Number.NaN, bool)).toBe(true);
    expect(convertValue(0n, bool)).toBe(false);
    expect(convertValue(true, int64)).toBe(1n);
    ub(() => convertValue(3e9, int32), 'float-to-int-out-of-range');
    ub(() => convertValue(-1.5, uint32), 'float-to-int-out-of-range');
    ub(() => convertValue(Number.NaN, int32), 'float-to-int-out-of-range');
    expect(convertValue(0.1, float32)).toBe(Math.fround(0.1));
    expect(convertValue(16777217n, float32)).toBe(16777216);
  });

  it('rounds integers to float once (ties to even), not via double', () => {
    // 2^60 + 2^36 + 1 is just above a float tie; through double it would first round onto the tie
    // (2^60 + 2^36) and then to even (2^60): wrong.
    const v = (1n << 60n) + (1n << 36n) + 1n;
    expect(bigintToFloat32(v)).toBe(2 ** 60 + 2 ** 37);
    expect(Math.fround(Number(v))).toBe(2 ** 60);
    expect(bigintToFloat32((1n << 60n) + (1n << 36n))).toBe(2 ** 60);
    expect(bigintToFloat32(-((1n << 60n) + (3n << 36n)))).toBe(-(2 ** 60 + 2 ** 38));
    expect(convertValue(9007199254740993n, float64)).toBe(9007199254740992);
  });

  it('bigintToFloat32 is the nearest float', () => {
    const distance = (x: number, v: bigint): bigint => {
      const d = BigInt(x) - v;
      return d < 0n ? -d : d;
    };
    const neighbour = (f: number, step: 1 | -1): number => {
      const bits = new Uint32Array(new Float32Array([f]).buffer);
      return new Float32Array(new Uint32Array([(bits[0] as number) + step]).buffer)[0] as number;
    };
    fc.assert(
      fc.property(fc.bigInt({ min: -(1n << 63n), max: (1n << 64n) - 1n }), (v) => {
        const f = bigintToFloat32(v);
        expect(Math.fround(f)).toBe(f);
        for (const step of [1, -1] as const) {
          const g = neighbour(f, step);
          // Non-integral neighbours (around 0) are never closer to an integer than the integral f.
          if (Number.isFinite(g) && Number.isInteger(g)) expect(distance(f, v) <= distance(g, v)).toBe(true);
        }
      }),
    );
  });
});

describe('comparisons', () => {
  it('treat NaN as unordered', () => {
    expect(applyComparison('==', Number.NaN, Number.NaN)).toBe(false);
    expect(applyComparison('!=', Number.NaN, Number.NaN)).toBe(true);
    expect(applyComparison('<', Number.NaN, 1)).toBe(false);
    expect(applyComparison('==', 0, -0)).toBe(true);
  });
});
