import fc from 'fast-check';
import { Prng } from '@tilekit/host';
import { decode } from '@tilekit/numeric';
import { describe, expect, it } from 'vitest';
import { DsaArgumentError } from '../dsaArgumentError.ts';
import { dsaRandomPrefillInput } from '../testing/dsaRandomInputs.ts';
import { compareDsaLogits } from './compareDsaLogits.ts';
import { dsaEmulatedHeadDot } from './dsaEmulatedHeadDot.ts';
import type { DsaDotAccumulation } from './dsaHeadDotErrorBound.ts';
import { dsaIndexerPrefillReferenceWithBound, type DsaIndexerPrefillInput } from './dsaIndexerPrefillReference.ts';

const D = 128;
const NEG = Number.NEGATIVE_INFINITY;
const e4m3 = (bits: number): number => decode('fp8e4m3fn', bits);

/** Bugs a kernel could have, applied to the emulated GPU. */
interface Mutation {
  readonly dropHead?: number;
  readonly keyShift?: boolean;
  readonly scaleShift?: boolean;
  readonly noRelu?: boolean;
  readonly weightsOfNextQuery?: boolean;
  readonly windowEndPlusOne?: boolean;
}

/** A GPU-like prefill: emulated head dots, then an fp32 epilogue (w·ReLU per head, summed, ×kScale), each op rounded. */
function emulatedPrefill(x: DsaIndexerPrefillInput, accumulation: DsaDotAccumulation, bug: Mutation = {}): Float32Array {
  const q = Float64Array.from(x.q, e4m3);
  const k = Float64Array.from(x.k, e4m3);
  const out = new Float32Array(x.S * x.Skv).fill(NEG);
  for (let t = 0; t < x.S; t++) {
    const end = Math.min(x.Skv, x.windowEnd[t]! + (bug.windowEndPlusOne ? 1 : 0));
    for (let s = x.windowStart[t]!; s < end; s++) {
      const key = bug.keyShift ? (s + 1) % x.Skv : s;
      const wRow = bug.weightsOfNextQuery ? (t + 1) % x.S : t;
      let sum = 0;
      for (let h = 0; h < x.H; h++) {
        if (h === bug.dropHead) continue;
        const dot = Math.fround(dsaEmulatedHeadDot(q, (t * x.H + h) * D, k, key * D, accumulation));
        sum = Math.fround(sum + Math.fround(x.weights[wRow * x.H + h]! * (bug.noRelu ? dot : Math.max(0, dot))));
      }
      out[t * x.Skv + s] = Math.fround(sum * x.kScales[bug.scaleShift ? (s + 1) % x.Skv : s]!);
    }
  }
  return out;
}

/** A causal problem of DeepSeek's shape (64 heads), optionally with small-integer q and k (exact on a tensor core). */
function problem(seed: number, small = false): DsaIndexerPrefillInput {
  const rng = new Prng(seed);
  const x = dsaRandomPrefillInput({ S: 8, H: 64, Skv: 48, windows: 'causal' }, rng);
  if (!small) return x;
  const smallBits = [0x00, 0x38, 0x40, 0x44, 0x48, 0xb8, 0xc0, 0xc4, 0xc8]; // 0, ±1, ±2, ±3, ±4
  const pick = (): number => smallBits[rng.nextInt(0, smallBits.length - 1)]!;
  return { ...x, q: x.q.map(pick), k: x.k.map(pick) };
}

describe('compareDsaLogits', () => {
  it('passes identical logits and counts the finite ones', () => {
    const expected = Float32Array.from([1, NEG, -2, 0]);
    const r = compareDsaLogits(expected, expected.slice(), Float64Array.from([0, 0, 0, 0]));
    expect(r).toEqual({ checked: 3, overBound: 0, maskMismatches: 0, worstError: 0, worstIndex: 0, worstRatio: 0, ok: true });
  });

  it('demands −∞ exactly where masked and a finite value within slack·bound elsewhere (golden)', () => {
    const expected = Float32Array.from([1, NEG, 10, 5]);
    const bound = Float64Array.from([0.5, 0, 1, 1]);
    expect(compareDsaLogits(expected, Float32Array.from([1.5, NEG, 9, 5]), bound).ok).toBe(true); // errors at the bound
    const over = compareDsaLogits(expected, Float32Array.from([1.75, NEG, 10, 5]), bound);
    expect([over.ok, over.overBound, over.worstIndex, over.worstError, over.worstRatio]).toEqual([false, 1, 0, 0.75, 1.5]);
    expect(compareDsaLogits(expected, Float32Array.from([1.75, NEG, 10, 5]), bound, { slack: 2 }).ok).toBe(true);
    const unmasked = compareDsaLogits(expected, Float32Array.from([1, -1e30, 10, 5]), bound);
    expect([unmasked.maskMismatches, unmasked.overBound, unmasked.ok]).toEqual([1, 0, false]);
    const masked = compareDsaLogits(expected, Float32Array.from([1, NEG, NEG, 5]), bound);
    expect([masked.maskMismatches, masked.overBound, masked.worstError, masked.worstIndex]).toEqual([1, 1, Infinity, 2]);
    const nan = compareDsaLogits(expected, Float32Array.from([1, NEG, 10, Number.NaN]), bound);
    expect([nan.overBound, nan.maskMismatches, nan.worstIndex]).toEqual([1, 0, 3]);
    expect(compareDsaLogits(expected, Float32Array.from([1, NEG, 10, Infinity]), bound).overBound).toBe(1);
  });

  it('rejects mismatched lengths, bad expected values, bounds and slack', () => {
    const x = Float32Array.from([1]);
    const b = Float64Array.from([1]);
    expect(() => compareDsaLogits(x, new Float32Array(2), b)).toThrow(/actual/);
    expect(() => compareDsaLogits(x, x, new Float64Array(0))).toThrow(/errorBound/);
    expect(() => compareDsaLogits(Float32Array.from([Number.NaN]), x, b)).toThrow(/expected\[0\]/);
    expect(() => compareDsaLogits(Float32Array.from([Infinity]), x, b)).toThrow(DsaArgumentError);
    expect(() => compareDsaLogits(x, x, Float64Array.from([-1]))).toThrow(/errorBound\[0\]/);
    expect(() => compareDsaLogits(x, x, b, { slack: 0 })).toThrow(/slack/);
  });

  it('passes an emulated GPU under its own accumulation model', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        fc.boolean(),
        fc.constantFrom<DsaDotAccumulation>('fp32', 'fp8TensorCore'),
        (seed, small, model) => {
          const x = problem(seed, small);
          const { logits, errorBound } = dsaIndexerPrefillReferenceWithBound(x, model);
          const r = compareDsaLogits(logits, emulatedPrefill(x, model), errorBound);
          expect(r.ok).toBe(true);
          expect(r.checked).toBe(8 * 41 + 28); // causal windows 41 … 48
        },
      ),
      { numRuns: 12 },
    );
  });

  it('fails the fp8 tensor-core emulation under the fp32 model (the model matters)', () => {
    const x = problem(3);
    const { logits, errorBound } = dsaIndexerPrefillReferenceWithBound(x, 'fp32');
    expect(compareDsaLogits(logits, emulatedPrefill(x, 'fp8TensorCore'), errorBound).overBound).toBeGreaterThan(0);
  });

  it('flags emulated kernel bugs under the fp8 tensor-core bound', () => {
    const x = problem(11);
    const { logits, errorBound } = dsaIndexerPrefillReferenceWithBound(x, 'fp8TensorCore');
    const flagged = (bug: Mutation): { overBound: number; maskMismatches: number } =>
      compareDsaLogits(logits, emulatedPrefill(x, 'fp8TensorCore', bug), errorBound);
    const checked = compareDsaLogits(logits, logits, errorBound).checked;
    expect(flagged({ keyShift: true }).overBound).toBeGreaterThan(checked / 2);
    expect(flagged({ scaleShift: true }).overBound).toBeGreaterThan(checked / 4);
    expect(flagged({ noRelu: true }).overBound).toBeGreaterThan(checked / 2);
    expect(flagged({ weightsOfNextQuery: true }).overBound).toBeGreaterThan(checked / 2);
    expect(flagged({ windowEndPlusOne: true }).maskMismatches).toBeGreaterThan(0);
    // One head of 64 left out: full-entropy fp8 accumulation hides it in most elements, not in all.
    expect(flagged({ dropHead: 17 }).overBound).toBeGreaterThan(0);
    // With small-integer operands the tensor core is exact, so the bound shrinks to the fp32 epilogue and a dropped head shows almost everywhere.
    const exact = problem(11, true);
    const reference = dsaIndexerPrefillReferenceWithBound(exact, 'fp8TensorCore');
    const dropped = compareDsaLogits(reference.logits, emulatedPrefill(exact, 'fp8TensorCore', { dropHead: 17 }), reference.errorBound);
    expect(dropped.overBound).toBeGreaterThan(dropped.checked / 4);
  });
});
