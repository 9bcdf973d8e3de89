import fc from 'fast-check';
import { Prng } from '@tilekit/host';
import { decode } from '@tilekit/numeric';
import { describe, expect, it } from 'vitest';
import { dsaRandomE4m3Bits } from '../testing/dsaRandomInputs.ts';
import { dsaEmulatedHeadDot } from './dsaEmulatedHeadDot.ts';
import { dsaExponentOf } from './dsaExponentOf.ts';
import { dsaHeadDotErrorBound, type DsaDotAccumulation } from './dsaHeadDotErrorBound.ts';

const D = 128;
const e4m3 = (bits: number): number => decode('fp8e4m3fn', bits);
const decoded = (bits: Uint8Array): Float64Array => Float64Array.from(bits, e4m3);
const models: DsaDotAccumulation[] = ['fp32', 'fp8TensorCore'];

/** Operand kinds: full-entropy patterns, quantizer-like rows (|x| up to 448, mostly large), small integers. */
type Kind = 'full' | 'large' | 'small';
const kindArb = fc.constantFrom<Kind>('full', 'large', 'small');

function operand(kind: Kind, rng: Prng): Float64Array {
  if (kind === 'full') return decoded(dsaRandomE4m3Bits(D, rng));
  if (kind === 'small') return Float64Array.from({ length: D }, () => rng.nextInt(-4, 4));
  return Float64Array.from({ length: D }, () => e4m3(rng.nextInt(0x40, 0x7e) | (rng.nextFloat() < 0.5 ? 0x80 : 0)));
}

const exactDot = (q: Float64Array, k: Float64Array): number => q.reduce((s, v, i) => s + v * k[i]!, 0);
const absDot = (q: Float64Array, k: Float64Array): number => q.reduce((s, v, i) => s + Math.abs(v * k[i]!), 0);

describe('dsaExponentOf', () => {
  it('is ⌊log2 |x|⌋ exactly, at and around powers of two', () => {
    fc.assert(
      fc.property(fc.integer({ min: -1000, max: 1000 }), fc.constantFrom(-1, 1), (e, sign) => {
        const x = sign * 2 ** e;
        expect(dsaExponentOf(x)).toBe(e);
        if (e > -1000) expect(dsaExponentOf(x * (1 - 2 ** -53))).toBe(e - 1);
        expect(dsaExponentOf(x * (1 + 2 ** -52))).toBe(e);
      }),
    );
  });
});

describe('dsaHeadDotErrorBound', () => {
  it('covers the emulated accumulation of each model on random operands', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 31 - 1 }), kindArb, kindArb, fc.constantFrom(...models), (seed, qKind, kKind, model) => {
        const rng = new Prng(seed);
        const q = operand(qKind, rng);
        const k = operand(kKind, rng);
        const error = Math.abs(dsaEmulatedHeadDot(q, 0, k, 0, model) - exactDot(q, k));
        expect(error).toBeLessThanOrEqual(dsaHeadDotErrorBound(q, 0, k, 0, model));
      }),
      { numRuns: 300 },
    );
  });

  it('is 2^-16·Σ|p| for fp32, and 0 for the tensor core when every partial sum is exactly representable', () => {
    const rng = new Prng(5);
    const q = operand('full', rng);
    const k = operand('full', rng);
    expect(dsaHeadDotErrorBound(q, 0, k, 0, 'fp32')).toBe(2 ** -16 * absDot(q, k));
    const small = operand('small', rng);
    const other = operand('small', rng);
    expect(dsaHeadDotErrorBound(small, 0, other, 0, 'fp8TensorCore')).toBe(0);
    expect(dsaHeadDotErrorBound(new Float64Array(D), 0, q, 0, 'fp8TensorCore')).toBe(0);
  });

  it('charges a small negative product a full unit and a small positive one at most itself (golden)', () => {
    // Step 0: products 256·1 and one tiny product ±2^-9·2^-9 = ±2^-18; M = 256, u = 2^(8 − 12) = 2^-4.
    const q = new Float64Array(D);
    const k = new Float64Array(D);
    q[0] = 256;
    k[0] = 1;
    q[1] = 2 ** -9;
    k[1] = 2 ** -9;
    // Positive tiny: the product loses at most itself (2^-18), the result is then inexact: + v = 2^-4; each later
    // (all-zero) step charges u for the inexact accumulator and v for its result.
    expect(dsaHeadDotErrorBound(q, 0, k, 0, 'fp8TensorCore')).toBe(2 ** -18 + 2 ** -4 + 3 * (2 * 2 ** -4));
    k[1] = -(2 ** -9);
    // Negative tiny: a full unit 2^-4; then v for the step's result; the next three steps charge u (accumulator) + v.
    expect(dsaHeadDotErrorBound(q, 0, k, 0, 'fp8TensorCore')).toBe(2 ** -4 + 2 ** -4 + 3 * (2 * 2 ** -4));
  });

  it('reads the operands at their offsets', () => {
    const rng = new Prng(9);
    const q = operand('full', rng);
    const k = operand('large', rng);
    const padded = new Float64Array(3 * D);
    padded.set(q, D);
    const paddedK = new Float64Array(2 * D);
    paddedK.set(k, D);
    for (const model of models) expect(dsaHeadDotErrorBound(padded, D, paddedK, D, model)).toBe(dsaHeadDotErrorBound(q, 0, k, 0, model));
  });
});
