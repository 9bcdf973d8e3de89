import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { doubleLiteralText, floatLiteralText } from './floatLiteral.ts';

describe('float literals', () => {
  it('print the shortest exact decimal', () => {
    expect(floatLiteralText(Math.fround(0.1))).toBe('0.1f');
    expect(floatLiteralText(1)).toBe('1.0f');
    expect(floatLiteralText(-2.5)).toBe('-2.5f');
    expect(floatLiteralText(0)).toBe('0.0f');
    expect(floatLiteralText(-0)).toBe('-0.0f');
    expect(floatLiteralText(16777216)).toBe('16777216.0f');
    expect(floatLiteralText(Math.fround(3.4028234663852886e38))).toBe('3.4028235e+38f');
    expect(floatLiteralText(Math.fround(1.401298464324817e-45))).toBe('1e-45f');
    expect(doubleLiteralText(0.1)).toBe('0.1');
    expect(doubleLiteralText(1)).toBe('1.0');
    expect(doubleLiteralText(-0)).toBe('-0.0');
    expect(doubleLiteralText(1e21)).toBe('1e+21');
  });

  it('rejects values with no literal', () => {
    expect(() => floatLiteralText(0.1)).toThrow(/binary32/);
    expect(() => doubleLiteralText(Number.POSITIVE_INFINITY)).toThrow(/finite/);
  });

  it('a float literal reads back as the same float', () => {
    fc.assert(
      fc.property(fc.float({ noNaN: true, noDefaultInfinity: true }), (x) => {
        const text = floatLiteralText(x);
        expect(text.endsWith('f')).toBe(true);
        expect(Object.is(Math.fround(Number(text.slice(0, -1))), x)).toBe(true);
      }),
    );
  });

  it('a double literal reads back as the same double', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (x) => {
        expect(Object.is(Number(doubleLiteralText(x)), x)).toBe(true);
      }),
    );
  });
});
