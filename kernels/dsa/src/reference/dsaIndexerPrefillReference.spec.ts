import fc from 'fast-check';
import { Prng } from '@tilekit/host';
import { decode } from '@tilekit/numeric';
import { describe, expect, it } from 'vitest';
import { DsaArgumentError } from '../dsaArgumentError.ts';
import { dsaRandomPrefillInput } from '../testing/dsaRandomInputs.ts';
import {
  dsaIndexerPrefillReference,
  dsaIndexerPrefillReferenceWithBound,
  type DsaIndexerPrefillInput,
} from './dsaIndexerPrefillReference.ts';

const D = 128;
const e4m3 = (bits: number): number => decode('fp8e4m3fn', bits);

/** Independent oracle: nested arrays of decoded values, the formula term by term (heads ascending, ×kScale last). */
function bruteLogits(x: DsaIndexerPrefillInput): number[][] {
  const q = Array.from({ length: x.S }, (_, t) =>
    Array.from({ length: x.H }, (_, h) => Array.from({ length: D }, (_, i) => e4m3(x.q[(t * x.H + h) * D + i]!))),
  );
  const k = Array.from({ length: x.Skv }, (_, s) => Array.from({ length: D }, (_, i) => e4m3(x.k[s * D + i]!)));
  return q.map((heads, t) =>
    k.map((key, s) => {
      if (s < x.windowStart[t]! || s >= x.windowEnd[t]!) return Number.NEGATIVE_INFINITY;
      const sum = heads.reduce(
        (acc, qh, h) =>
          acc +
          x.weights[t * x.H + h]! *
            Math.max(
              0,
              qh.reduce((d, v, i) => d + v * key[i]!, 0),
            ),
        0,
      );
      return Math.fround(x.kScales[s]! * sum);
    }),
  );
}

const rows = (logits: Float32Array, cols: number): number[][] =>
  Array.from({ length: logits.length / cols }, (_, r) => Array.from(logits.subarray(r * cols, (r + 1) * cols)));

const inputArb = fc
  .record({
    seed: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
    S: fc.integer({ min: 1, max: 5 }),
    H: fc.constantFrom(1, 2, 7, 32),
    extra: fc.integer({ min: 0, max: 40 }),
    scaleFormat: fc.constantFrom('fp32' as const, 'ue8m0' as const),
    windows: fc.constantFrom('causal' as const, 'random' as const),
  })
  .map(({ seed, S, H, extra, scaleFormat, windows }) =>
    dsaRandomPrefillInput({ S, H, Skv: S + extra, scaleFormat, windows }, new Prng(seed)),
  );

/** A one-token-per-value helper: a [n][128] array of one e4m3 pattern per row. */
const constantRows = (...bits: number[]): Uint8Array => Uint8Array.from(bits.flatMap((b) => new Array<number>(D).fill(b)));

describe('dsaIndexerPrefillReference', () => {
  it('computes kScale·Σ_h w_h·ReLU(q_h·k) on a golden case (a negative dot is cut by the ReLU)', () => {
    // Head 0: q = 1.0 (0x38), head 1: q = −1.0 (0xb8); key 0: all 0.5 (0x30), key 1: all −0.5 (0xb0).
    const input: DsaIndexerPrefillInput = {
      q: constantRows(0x38, 0xb8),
      weights: Float32Array.from([2, 3]),
      k: constantRows(0x30, 0xb0),
      kScales: Float32Array.from([0.25, 4]),
      windowStart: Int32Array.from([0]),
      windowEnd: Int32Array.from([2]),
      S: 1,
      H: 2,
      Skv: 2,
    };
    // Key 0: dots 64, −64 → 0.25·(2·64) = 32. Key 1: dots −64, 64 → 4·(3·64) = 768.
    expect(Array.from(dsaIndexerPrefillReference(input))).toEqual([32, 768]);
    expect(Array.from(dsaIndexerPrefillReference({ ...input, windowStart: Int32Array.from([1]) }))).toEqual([
      Number.NEGATIVE_INFINITY,
      768,
    ]);
    expect(Array.from(dsaIndexerPrefillReference({ ...input, windowEnd: Int32Array.from([0]) }))).toEqual([
      Number.NEGATIVE_INFINITY,
      Number.NEGATIVE_INFINITY,
    ]);
  });

  it('equals the term-by-term oracle on random problems (−∞ exactly outside each window)', () => {
    fc.assert(
      fc.property(inputArb, (input) => {
        expect(rows(dsaIndexerPrefillReference(input), input.Skv)).toEqual(bruteLogits(input));
      }),
      { numRuns: 40 },
    );
  });

  it('does not depend on the window inside it, and scales a column exactly with its kScale', () => {
    fc.assert(
      fc.property(inputArb, fc.integer({ min: -8, max: 8 }), (input, j) => {
        const full = { ...input, windowStart: new Int32Array(input.S), windowEnd: new Int32Array(input.S).fill(input.Skv) };
        const all = dsaIndexerPrefillReference(full);
        const windowed = dsaIndexerPrefillReference(input);
        for (let t = 0; t < input.S; t++) {
          for (let s = 0; s < input.Skv; s++) {
            const inside = s >= input.windowStart[t]! && s < input.windowEnd[t]!;
            expect(windowed[t * input.Skv + s]).toBe(inside ? all[t * input.Skv + s] : Number.NEGATIVE_INFINITY);
          }
        }
        const scaled = dsaIndexerPrefillReference({ ...full, kScales: input.kScales.map((x) => x * 2 ** j) });
        expect(Array.from(scaled)).toEqual(Array.from(all, (x) => x * 2 ** j));
      }),
      { numRuns: 30 },
    );
  });

  it('is ReLU-shaped: I(q) − I(−q) = kScale·Σ_h w_h·(q_h·k), and non-negative weights give non-negative logits', () => {
    fc.assert(
      fc.property(inputArb, (input) => {
        const full = { ...input, windowStart: new Int32Array(input.S), windowEnd: new Int32Array(input.S).fill(input.Skv) };
        const plus = dsaIndexerPrefillReference(full);
        const minus = dsaIndexerPrefillReference({ ...full, q: full.q.map((b) => b ^ 0x80) });
        for (let t = 0; t < input.S; t++) {
          for (let s = 0; s < input.Skv; s++) {
            let linear = 0;
            let magnitude = 0;
            for (let h = 0; h < input.H; h++) {
              let dot = 0;
              for (let i = 0; i < D; i++) dot += e4m3(input.q[(t * input.H + h) * D + i]!) * e4m3(input.k[s * D + i]!);
              linear += input.weights[t * input.H + h]! * dot;
              magnitude += Math.abs(input.weights[t * input.H + h]! * dot);
            }
            const at = t * input.Skv + s;
            expect(Math.abs(plus[at]! - minus[at]! - input.kScales[s]! * linear)).toBeLessThanOrEqual(
              2 ** -22 * input.kScales[s]! * magnitude + 2 ** -140,
            );
          }
        }
        const positive = dsaIndexerPrefillReference({ ...full, weights: full.weights.map(Math.abs) });
        expect(positive.every((x) => x >= 0)).toBe(true);
      }),
      { numRuns: 30 },
    );
  });

  it('returns the same logits with a bound, and the bound is 0 exactly where the logit is −∞', () => {
    fc.assert(
      fc.property(inputArb, fc.constantFrom('fp32' as const, 'fp8TensorCore' as const), (input, accumulation) => {
        const { logits, errorBound } = dsaIndexerPrefillReferenceWithBound(input, accumulation);
        expect(Array.from(logits)).toEqual(Array.from(dsaIndexerPrefillReference(input)));
        logits.forEach((x, i) => expect(errorBound[i]! > 0).toBe(x !== Number.NEGATIVE_INFINITY));
      }),
      { numRuns: 20 },
    );
  });

  it('rejects bad sizes, windows, NaN patterns and non-finite weights or scales', () => {
    const good = dsaRandomPrefillInput({ S: 2, H: 2, Skv: 3 }, new Prng(1));
    const bad = (patch: Partial<DsaIndexerPrefillInput>): unknown => dsaIndexerPrefillReference({ ...good, ...patch });
    expect(() => bad({})).not.toThrow();
    expect(() => bad({ H: 3 })).toThrow(/q.*S·H·128/);
    expect(() => bad({ H: 0 })).toThrow(/H/);
    expect(() => bad({ kScales: new Float32Array(2) })).toThrow(/kScales/);
    expect(() => bad({ windowEnd: Int32Array.from([1, 4]) })).toThrow(/windowEnd\[1\]/);
    expect(() => bad({ windowStart: Int32Array.from([2, 0]), windowEnd: Int32Array.from([1, 3]) })).toThrow(/windowStart\[0\]/);
    expect(() => bad({ windowStart: Int32Array.from([-1, 0]) })).toThrow(DsaArgumentError);
    expect(() => bad({ weights: Float32Array.from([1, Number.NaN, 1, 1]) })).toThrow(/weights\[1\]/);
    expect(() => bad({ kScales: Float32Array.from([1, Infinity, 1]) })).toThrow(/kScales\[1\]/);
    const q = good.q.slice();
    q[300] = 0x7f;
    expect(() => bad({ q })).toThrow(/q\[300\]/);
    const k = good.k.slice();
    k[2] = 0xff;
    expect(() => bad({ k })).toThrow(/k\[2\]/);
  });
});
