// Golden AMD fnuz fp8 patterns (MI300 ISA / LLVM Float8E4M3FNUZ, Float8E5M2FNUZ: bias 8 and 16,
// no infinities, no negative zero, 0x80 is the only NaN).
import { describe, expect, it } from 'vitest';
import { decode, encode } from './conversion.ts';

describe.each([
  ['fp8e4m3fnuz', { one: 0x40, max: 240, maxBits: 0x7f, minNormal: 2 ** -7, minSubnormal: 2 ** -10, tie: 1 + 2 ** -4 }],
  ['fp8e5m2fnuz', { one: 0x40, max: 57344, maxBits: 0x7f, minNormal: 2 ** -15, minSubnormal: 2 ** -17, tie: 1 + 2 ** -3 }],
] as const)('%s golden patterns', (name, facts) => {
  const step = (facts.tie - 1) * 2; // one ulp at 1

  it('encodes 1, max, the smallest normal and subnormal', () => {
    expect(encode(name, 1)).toBe(facts.one);
    expect(encode(name, -1)).toBe(0x80 + facts.one);
    expect(encode(name, facts.max)).toBe(facts.maxBits);
    expect(decode(name, facts.maxBits)).toBe(facts.max);
    expect(decode(name, 0xff)).toBe(-facts.max);
    expect(encode(name, facts.minNormal)).toBe(name === 'fp8e4m3fnuz' ? 0x08 : 0x04);
    expect(encode(name, facts.minSubnormal)).toBe(0x01);
  });

  it('has a single NaN, 0x80, and no negative zero', () => {
    expect(encode(name, NaN)).toBe(0x80);
    expect(decode(name, 0x80)).toBeNaN();
    expect(encode(name, -0)).toBe(0x00);
    expect(encode(name, -facts.minSubnormal / 4)).toBe(0x00);
  });

  it('rounds ties to even', () => {
    expect(encode(name, facts.tie)).toBe(facts.one); // half-up: one + 1
    expect(encode(name, 1 + 1.5 * step)).toBe(facts.one + 2); // truncation: one + 1
  });

  it('overflow: NaN (0x80) non-saturating, ±max when saturating; Inf the same', () => {
    const ulpAtMax = facts.max - decode(name, facts.maxBits - 1);
    const tie = facts.max + ulpAtMax / 2; // max's mantissa is all ones (odd): the tie overflows
    expect(encode(name, tie - ulpAtMax / 4)).toBe(facts.maxBits);
    expect(encode(name, tie)).toBe(0x80);
    expect(encode(name, -tie)).toBe(0x80);
    expect(encode(name, Infinity)).toBe(0x80);
    expect(encode(name, tie, { saturate: true })).toBe(facts.maxBits);
    expect(encode(name, -Infinity, { saturate: true })).toBe(0xff);
    expect(encode(name, 1e9, { rounding: 'towardZero' })).toBe(facts.maxBits);
  });
});

it('e4m3fnuz: 240 is 0x7F and 248 (the tie above it) is NaN, as PyTorch converts', () => {
  expect(encode('fp8e4m3fnuz', 240)).toBe(0x7f);
  expect(encode('fp8e4m3fnuz', 247.9)).toBe(0x7f);
  expect(encode('fp8e4m3fnuz', 248)).toBe(0x80);
});
