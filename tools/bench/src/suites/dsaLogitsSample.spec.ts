import { Prng } from '@tilekit/host';
import {
  DSA_PAGE_BYTES,
  DSA_PAGE_SCALE_OFFSET,
  dsaIndexerDecodeReferenceWithBound,
  dsaIndexerPrefillReferenceWithBound,
  type DsaIndexerDecodeInput,
} from '@tilekit/kernel-dsa';
import { describe, expect, it } from 'vitest';
import { dsaPrefillWindows } from './dsaIndexerCases.ts';
import {
  dsaDecodeLogitsCheck,
  dsaDecodeSample,
  dsaDecodeSampleOf,
  dsaDecodeSubproblem,
  dsaPrefillLogitsCheck,
  dsaPrefillSample,
  dsaPrefillSamplePositions,
  dsaSpread,
  type DsaDecodeHost,
  type DsaDecodeSample,
  type DsaPrefillHost,
} from './dsaLogitsSample.ts';

/** Random e4m3 bytes, never a NaN pattern (0x7f, 0xff). */
function e4m3Bytes(count: number, rng: Prng): Uint8Array {
  return Uint8Array.from({ length: count }, () => {
    const v = rng.nextInt(0, 253);
    return v >= 0x7f ? v + 1 : v;
  });
}

/** A full-context decode problem: B sequences of `pages` pages through a random block table, one spare 0xff page. */
function randomDecode(rng: Prng, B: number, nextN: number, H: number, pages: number): DsaIndexerDecodeInput {
  const numPages = B * pages + 1;
  const order = Int32Array.from({ length: numPages }, (_, i) => i);
  for (let i = numPages - 1; i > 0; i--) {
    const j = rng.nextInt(0, i);
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  const cache = new Uint8Array(numPages * DSA_PAGE_BYTES).fill(0xff);
  for (const page of order.subarray(0, B * pages)) {
    cache.set(e4m3Bytes(DSA_PAGE_SCALE_OFFSET, rng), page * DSA_PAGE_BYTES);
    const scales = Float32Array.from({ length: 64 }, () => 2 ** rng.nextRange(-9, -5));
    cache.set(new Uint8Array(scales.buffer), page * DSA_PAGE_BYTES + DSA_PAGE_SCALE_OFFSET);
  }
  const L = pages * 64;
  return {
    q: e4m3Bytes(B * nextN * H * 128, rng),
    weights: Float32Array.from({ length: B * nextN * H }, () => rng.nextNormal() * 2 ** -10),
    cache,
    blockTable: order.slice(0, B * pages),
    maxPages: pages,
    contextLens: new Int32Array(B).fill(L),
    B,
    nextN,
    H,
    maxContext: L,
  };
}

function hostOf(input: DsaIndexerDecodeInput): DsaDecodeHost {
  const { cache: _cache, ...host } = input;
  return host;
}

const pageReader = (input: DsaIndexerDecodeInput) => (page: number) =>
  input.cache.slice(page * DSA_PAGE_BYTES, (page + 1) * DSA_PAGE_BYTES);

describe('dsaSpread', () => {
  it('spreads the first, the last and evenly between; all of a short range', () => {
    expect(dsaSpread(5, 8)).toEqual([0, 1, 2, 3, 4]);
    expect(dsaSpread(128, 8)).toEqual([0, 18, 36, 54, 73, 91, 109, 127]);
    expect(dsaSpread(2048, 32)[31]).toBe(2047);
    expect(dsaSpread(10, 1)).toEqual([0]);
  });
});

describe('dsa decode logits on a sample', () => {
  const rng = new Prng(41);
  const input = randomDecode(rng, 3, 1, 4, 8);
  const full = dsaIndexerDecodeReferenceWithBound(input);
  const host = hostOf(input);
  const sample: DsaDecodeSample = { sequences: [0, 2], pages: [0, 3, 7] };

  it("the sample is a decode problem whose reference is the full problem's at the sampled positions (logits and bounds)", () => {
    for (const nextN of [1, 2]) {
      const x = nextN === 1 ? input : randomDecode(new Prng(5), 3, 2, 4, 8);
      const whole = dsaIndexerDecodeReferenceWithBound(x);
      const sub = dsaIndexerDecodeReferenceWithBound(dsaDecodeSubproblem(hostOf(x), sample, pageReader(x)));
      expect(sub.logits).toEqual(dsaDecodeSampleOf(whole.logits, hostOf(x), sample));
      expect(Float32Array.from(sub.errorBound)).toEqual(dsaDecodeSampleOf(Float32Array.from(whole.errorBound), hostOf(x), sample));
      if (nextN === 2) expect(sub.logits.some((v) => v === Number.NEGATIVE_INFINITY)).toBe(true);
    }
  });

  it('the reference itself passes, and so does every element moved by half its bound', () => {
    expect(dsaDecodeLogitsCheck(host, dsaDecodeSample(host), full.logits, pageReader(input))).toMatchObject({ ok: true });
    const nudged = full.logits.map((v, i) => v + 0.5 * full.errorBound[i]! * (i % 2 ? 1 : -1));
    const check = dsaDecodeLogitsCheck(host, sample, nudged, pageReader(input));
    expect(check.ok).toBe(true);
    expect(check.detail).toMatch(/^sequences 0,2 × 3 pages vs the CPU reference: 384 checked, 0 over the bound, 0 mask mismatches/);
  });

  it('fails a dropped key tile, swapped heads, a misread block table, one element past its bound', () => {
    const dropped = full.logits.slice();
    dropped.fill(0, 2 * 512 + 3 * 64, 2 * 512 + 4 * 64);
    const swappedWeights = input.weights.slice();
    for (let row = 0; row < 3; row++)
      [swappedWeights[row * 4], swappedWeights[row * 4 + 1]] = [swappedWeights[row * 4 + 1]!, swappedWeights[row * 4]!];
    const swapped = dsaIndexerDecodeReferenceWithBound({ ...input, weights: swappedWeights }).logits;
    const table = input.blockTable.slice();
    [table[3], table[4]] = [table[4]!, table[3]!];
    const misread = dsaIndexerDecodeReferenceWithBound({ ...input, blockTable: table }).logits;
    const over = full.logits.slice();
    over[7] = over[7]! + 1.5 * full.errorBound[7]!;
    for (const wrong of [dropped, swapped, misread, over]) {
      const check = dsaDecodeLogitsCheck(host, sample, wrong, pageReader(input));
      expect(check.ok).toBe(false);
      expect(check.detail).toMatch(/[1-9]\d* over the bound/);
    }
  });

  it('refuses a sample it cannot cut: a context below L, L not a multiple of 64, nextN 2 without the last page', () => {
    expect(() => dsaDecodeSubproblem({ ...host, contextLens: Int32Array.from([512, 512, 500]) }, sample, pageReader(input))).toThrow(
      /every context = L = 512; sequence 2 has 500/,
    );
    expect(() => dsaDecodeSubproblem({ ...host, maxContext: 500 }, sample, pageReader(input))).toThrow(/multiple of 64/);
    expect(() => dsaDecodeSubproblem({ ...host, nextN: 2 }, { sequences: [0], pages: [0, 3] }, pageReader(input))).toThrow(/last page/);
  });
});

describe('dsa prefill logits on a sample', () => {
  const rng = new Prng(43);
  const [S, L, H] = [12, 300, 4];
  const { start, end } = dsaPrefillWindows(S, L);
  const host: DsaPrefillHost = {
    S,
    H,
    Skv: L,
    q: e4m3Bytes(S * H * 128, rng),
    weights: Float32Array.from({ length: S * H }, () => rng.nextNormal() * 2 ** -10),
    k: e4m3Bytes(L * 128, rng),
    kScales: Float32Array.from({ length: L }, () => 2 ** rng.nextRange(-9, -5)),
    windowStart: start,
    windowEnd: end,
  };
  const full = dsaIndexerPrefillReferenceWithBound(host).logits;
  const sample = dsaPrefillSample(host, 4, 2);
  const rowsOf = (logits: Float32Array) => new Map(sample.rows.map((t) => [t, logits.slice(t * L, (t + 1) * L)]));

  it("samples spread queries, and pages spread and at each sampled query's window edges (a partial last page clipped)", () => {
    expect(sample.rows).toEqual([0, 4, 7, 11]);
    // Windows end at 289, 293, 296, 300: pages 4 (keys 256…299, the partial last one); plus the first.
    expect(sample.pages).toEqual([0, 4]);
    expect(dsaPrefillSamplePositions(host, sample).length).toBe(64 + 44);
  });

  it('the reference passes; the check reports the sample and the whole-row masks', () => {
    const check = dsaPrefillLogitsCheck(host, sample, rowsOf(full));
    expect(check).toEqual({
      ok: true,
      detail: expect.stringMatching(
        /^queries 0,4,7,11 × 108 keys vs the CPU reference: \d+ checked, 0 over the bound, 0 mask mismatches.*; whole-row masks: 0 wrong$/,
      ),
    });
  });

  it('fails a finite logit past the window, NaN inside it (both outside the sampled keys), a dropped key tile', () => {
    const past = full.slice();
    past[0 * L + 295] = 0; // query 0 sees [0, 289)
    const nan = full.slice();
    nan[4 * L + 100] = Number.NaN; // key 100 is in no sampled page
    const dropped = full.slice();
    dropped.fill(0, 7 * L, 7 * L + 64);
    expect(dsaPrefillLogitsCheck(host, sample, rowsOf(past)).detail).toMatch(/whole-row masks: 1 wrong$/);
    expect(dsaPrefillLogitsCheck(host, sample, rowsOf(nan))).toMatchObject({ ok: false, detail: expect.stringMatching(/masks: 1 wrong$/) });
    const check = dsaPrefillLogitsCheck(host, sample, rowsOf(dropped));
    expect(check.ok).toBe(false);
    expect(check.detail).toMatch(/[1-9]\d* over the bound/);
    expect(dsaPrefillLogitsCheck(host, sample, rowsOf(past)).ok).toBe(false);
  });

  it('needs every sampled row', () => {
    expect(() => dsaPrefillLogitsCheck(host, sample, new Map())).toThrow(/our row 0 of 300 logits is missing/);
  });
});
