import fc from 'fast-check';
import { Prng } from '@tilekit/host';
import { describe, expect, it } from 'vitest';
import { DsaArgumentError } from '../dsaArgumentError.ts';
import { DSA_PAGE_BYTES } from '../dsaShape.ts';
import { dsaRandomDecodeInput } from '../testing/dsaRandomInputs.ts';
import { dsaIndexerDecodeReference, dsaIndexerDecodeReferenceWithBound, type DsaIndexerDecodeInput } from './dsaIndexerDecodeReference.ts';
import { dsaIndexerPrefillReference } from './dsaIndexerPrefillReference.ts';
import { dsaQuantizeIndexKeys } from './dsaQuantizeIndexKeys.ts';
import { dsaWriteIndexCacheReference } from './dsaWriteIndexCacheReference.ts';

const D = 128;
const NEG = Number.NEGATIVE_INFINITY;

const caseArb = fc
  .record({
    seed: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
    B: fc.integer({ min: 1, max: 3 }),
    nextN: fc.constantFrom(1, 2, 3),
    H: fc.constantFrom(1, 4, 32),
    maxContext: fc.integer({ min: 1, max: 150 }),
    scaleFormat: fc.constantFrom('fp32' as const, 'ue8m0' as const),
  })
  .map(({ seed, ...options }) => ({
    scaleFormat: options.scaleFormat,
    ...dsaRandomDecodeInput({ ...options, minContext: 0 }, new Prng(seed)),
  }));

/** A golden problem: one sequence of 3 tokens on page 1 of a 2-page cache, H = 1, q = all 1.0, token p = all 1.0 with scale p + 1. */
function goldenInput(): DsaIndexerDecodeInput {
  const cache = new Uint8Array(2 * DSA_PAGE_BYTES).fill(0xff); // page 0 holds NaNs: reading it would throw
  dsaWriteIndexCacheReference({
    cache,
    values: new Uint8Array(3 * D).fill(0x38),
    scales: Float32Array.from([1, 2, 3]),
    slots: Int32Array.from([64, 65, 66]),
  });
  return {
    q: new Uint8Array(2 * D).fill(0x38),
    weights: Float32Array.from([1, 0.5]),
    cache,
    blockTable: Int32Array.from([1]),
    maxPages: 1,
    contextLens: Int32Array.from([3]),
    B: 1,
    nextN: 2,
    H: 1,
    maxContext: 5,
  };
}

describe('dsaIndexerDecodeReference', () => {
  it('masks causally within the multi-token step and reads tokens through the block table (golden)', () => {
    // Query 0 sits at position 1 (sees 0, 1), query 1 at position 2 (sees 0 … 2); dot = 128, logit = (p + 1)·w·128.
    expect(Array.from(dsaIndexerDecodeReference(goldenInput()))).toEqual([128, 256, NEG, NEG, NEG, 64, 128, 192, NEG, NEG]);
    // A context shorter than nextN leaves the early query with no visible key.
    expect(Array.from(dsaIndexerDecodeReference({ ...goldenInput(), contextLens: Int32Array.from([1]) }))).toEqual([
      NEG,
      NEG,
      NEG,
      NEG,
      NEG,
      64,
      NEG,
      NEG,
      NEG,
      NEG,
    ]);
  });

  it('equals the prefill reference on each sequence’s keys laid out contiguously, −∞ past each query', () => {
    fc.assert(
      fc.property(caseArb, ({ input, keys, scaleFormat }) => {
        const { B, nextN, H, maxContext } = input;
        const logits = dsaIndexerDecodeReference(input);
        for (let b = 0; b < B; b++) {
          const length = input.contextLens[b]!;
          const { values, scales } = dsaQuantizeIndexKeys(keys[b]!, length, scaleFormat);
          const windowEnd = Int32Array.from({ length: nextN }, (_, r) => Math.max(0, length - nextN + r + 1));
          const expected = dsaIndexerPrefillReference({
            q: input.q.subarray(b * nextN * H * D, (b + 1) * nextN * H * D),
            weights: input.weights.subarray(b * nextN * H, (b + 1) * nextN * H),
            k: values,
            kScales: scales,
            windowStart: new Int32Array(nextN),
            windowEnd,
            S: nextN,
            H,
            Skv: length,
          });
          for (let r = 0; r < nextN; r++) {
            const row = Array.from(logits.subarray((b * nextN + r) * maxContext, (b * nextN + r + 1) * maxContext));
            expect(row.slice(0, length)).toEqual(Array.from(expected.subarray(r * length, (r + 1) * length)));
            expect(row.slice(length).every((x) => x === NEG)).toBe(true);
          }
        }
      }),
      { numRuns: 40 },
    );
  });

  it('returns the same logits with a bound, positive exactly where the logit is finite', () => {
    fc.assert(
      fc.property(caseArb, ({ input }) => {
        const { logits, errorBound } = dsaIndexerDecodeReferenceWithBound(input);
        expect(Array.from(logits)).toEqual(Array.from(dsaIndexerDecodeReference(input)));
        logits.forEach((x, i) => expect(errorBound[i]! > 0).toBe(x !== NEG));
      }),
      { numRuns: 20 },
    );
  });

  it('rejects bad sizes, context lengths, block-table entries, and NaN bytes in a token it reads', () => {
    const bad = (patch: Partial<DsaIndexerDecodeInput>): unknown => dsaIndexerDecodeReference({ ...goldenInput(), ...patch });
    expect(() => bad({})).not.toThrow();
    expect(() => bad({ contextLens: Int32Array.from([6]) })).toThrow(/contextLens\[0\]/);
    expect(() => bad({ contextLens: Int32Array.from([-1]) })).toThrow(DsaArgumentError);
    expect(() => bad({ maxContext: 2 })).toThrow(/contextLens\[0\]/);
    expect(() => bad({ blockTable: Int32Array.from([0]) })).toThrow(/cache slot 0\[0\]/); // page 0 holds NaN bytes
    expect(() => bad({ blockTable: Int32Array.from([2]) })).toThrow(/slot/); // past the cache
    expect(() => bad({ blockTable: Int32Array.from([-1]) })).toThrow(/blockTable\[0\]/);
    expect(() => bad({ weights: Float32Array.from([1]) })).toThrow(/weights/);
    expect(() => bad({ cache: new Uint8Array(10) })).toThrow(/cache/);
    expect(() => bad({ nextN: 0 })).toThrow(/nextN/);
    expect(() => bad({ q: new Uint8Array(2 * D).fill(0x7f) })).toThrow(/q\[0\]/);
  });
});
