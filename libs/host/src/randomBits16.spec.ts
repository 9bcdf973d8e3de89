import fc from 'fast-check';
import { ArgumentError, decode, encode, getDType } from '@tilekit/numeric';
import { describe, expect, it } from 'vitest';
import { fillTensor, fillValues } from './fill.ts';
import { HostTensor } from './hostTensor.ts';
import { randomBits16 } from './randomBits16.ts';

const dtypeArb = fc.constantFrom('fp16' as const, 'bf16' as const);
const seedArb = fc.integer({ min: -(2 ** 40), max: 2 ** 40 });

describe('randomBits16', () => {
  it('is reproducible: same dtype, count and seed give the same bits', () => {
    fc.assert(
      fc.property(dtypeArb, fc.nat(300), seedArb, (dtype, count, seed) => {
        expect(randomBits16(dtype, count, seed)).toEqual(randomBits16(dtype, count, seed));
      }),
    );
  });

  it('rounds fillValues to the nearest value of the dtype (default uniform in [-1, 1))', () => {
    fc.assert(
      fc.property(dtypeArb, fc.nat(300), seedArb, (dtype, count, seed) => {
        const bits = randomBits16(dtype, count, seed);
        const values = fillValues({ kind: 'uf', min: -1, max: 1 }, count, seed);
        expect(bits).toBeInstanceOf(Uint16Array);
        expect(bits.length).toBe(count);
        for (let i = 0; i < count; i++) {
          expect(bits[i]).toBe(encode(dtype, values[i]!));
          const x = decode(dtype, bits[i]!);
          // Rounding may carry a value just below 1 up to 1, never past it.
          expect(x >= -1 && x <= 1).toBe(true);
        }
      }),
    );
  });

  it('equals fillTensor of a one-dimensional tensor for any spec', () => {
    fc.assert(
      fc.property(dtypeArb, fc.nat(200), seedArb, fc.constantFrom('uf:-4,4', 'ui', 'nf:0,2', 'tf', 'uf:q'), (dtype, count, seed, spec) => {
        const tensor = fillTensor(HostTensor.empty(dtype, [count]), spec, seed);
        expect(randomBits16(getDType(dtype), count, seed, spec)).toEqual(tensor.storage);
      }),
    );
  });

  it('spreads over the interval: golden moments of 10^5 draws', () => {
    // Uniform on [-1, 1): mean 0, variance 1/3; fp16 rounding moves either by far less than 0.01.
    const bits = randomBits16('fp16', 100_000, 11939);
    let sum = 0;
    let squares = 0;
    for (const b of bits) {
      const x = decode('fp16', b);
      sum += x;
      squares += x * x;
    }
    expect(Math.abs(sum / bits.length)).toBeLessThan(0.01);
    expect(Math.abs(squares / bits.length - 1 / 3)).toBeLessThan(0.01);
  });

  it('different seeds give different streams', () => {
    expect(randomBits16('bf16', 64, 1)).not.toEqual(randomBits16('bf16', 64, 2));
  });

  it('rejects dtypes that are not 16 bits wide and bad counts', () => {
    for (const dtype of ['fp32', 'fp8e4m3fn', 'int8'] as const) expect(() => randomBits16(dtype, 4, 1)).toThrow(ArgumentError);
    for (const count of [-1, 1.5, Number.NaN]) expect(() => randomBits16('fp16', count, 1)).toThrow(/count must be a non-negative integer/);
    expect(() => randomBits16('fp32', 4, 1)).toThrow(/dtype must be 16 bits wide/);
  });
});
