import fc from 'fast-check';
import { decode, encode } from '@tilekit/numeric';
import { describe, expect, it } from 'vitest';
import { DsaArgumentError } from '../dsaArgumentError.ts';
import { dsaBf16Bits, dsaBf16Values } from './dsaBf16Bits.ts';

describe('dsaBf16Bits / dsaBf16Values', () => {
  it('agree with the numeric codec on every bf16 pattern, and round-trip', () => {
    const all = Uint16Array.from({ length: 65536 }, (_, i) => i);
    const values = dsaBf16Values(all);
    all.forEach((b) => {
      const v = decode('bf16', b);
      if (Number.isNaN(v)) expect(values[b]).toBeNaN();
      else expect(Object.is(values[b], v)).toBe(true);
    });
    const finite = all.filter((b) => !Number.isNaN(values[b]!));
    expect(dsaBf16Bits(dsaBf16Values(finite))).toEqual(finite);
  });

  it('bits of bf16 values are their encoding', () => {
    fc.assert(
      fc.property(fc.float({ noNaN: true }), (x) => {
        const v = decode('bf16', encode('bf16', x));
        expect(dsaBf16Bits(Float32Array.of(v))[0]).toBe(encode('bf16', v));
      }),
      { numRuns: 500, seed: 5 },
    );
  });

  it('a value that is not bf16 is named', () => {
    expect(() => dsaBf16Bits(Float32Array.of(1, 1 + 2 ** -10), 'q')).toThrow(DsaArgumentError);
    expect(() => dsaBf16Bits(Float32Array.of(1, 1 + 2 ** -10), 'q')).toThrow(/q\[1\]/);
  });

  it('reads a subarray at its offset', () => {
    const values = Float32Array.of(0, 1, 2);
    expect(Array.from(dsaBf16Bits(values.subarray(1)))).toEqual([encode('bf16', 1), encode('bf16', 2)]);
  });
});
