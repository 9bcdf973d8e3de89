import fc from 'fast-check';
import { Prng } from '@tilekit/host';
import { describe, expect, it } from 'vitest';
import { DsaArgumentError } from '../dsaArgumentError.ts';
import { dsaRandomSparseMlaDecodeInput, dsaRandomSparseMlaPrefillInput, dsaRandomSparseMlaRows } from '../testing/dsaSparseMlaInputs.ts';
import { dsaSparseMlaRowsReader } from './dsaSparseMlaRowsReader.ts';
import {
  dsaSparseMlaDecodeReference,
  dsaSparseMlaPrefillReference,
  dsaSparseMlaPrefillReferenceWithBound,
  type DsaSparseMlaPrefillInput,
  type DsaSparseMlaResult,
} from './dsaSparseMlaReference.ts';

const DQK = 576;
const DV = 512;
const SEED = 0x5a_11;

/** A problem over hand-written rows: q and kv rows given as {dim: value} maps, all other dims 0. */
function handProblem(
  q: Record<number, number>[],
  kv: Record<number, number>[],
  indices: number[],
  extra: Partial<DsaSparseMlaPrefillInput> = {},
): DsaSparseMlaPrefillInput {
  const fill = (rows: Record<number, number>[]): Float32Array => {
    const out = new Float32Array(rows.length * DQK);
    rows.forEach((r, i) => Object.entries(r).forEach(([d, v]) => (out[i * DQK + Number(d)] = v)));
    return out;
  };
  const topk = indices.length;
  return { q: fill(q), kv: fill(kv), indices: Int32Array.from(indices), sQ: 1, hQ: q.length, sKv: kv.length, topk, smScale: 1, ...extra };
}

/** Two tokens with q·k = 0 and 1 and smScale = ln 3: weights 1/4 and 3/4. */
const TWO = {
  q: [{ 0: 1 }],
  kv: [
    { 0: 0, 1: 4 },
    { 0: 1, 1: 8 },
  ],
};

function expectClose(actual: Float32Array, expected: Float32Array, tolerance = 1e-6): void {
  expect(actual.length).toBe(expected.length);
  for (let i = 0; i < actual.length; i++) {
    const [a, e] = [actual[i]!, expected[i]!];
    if (a === e) continue;
    expect(Math.abs(a - e), `element ${i}: ${a} vs ${e}`).toBeLessThanOrEqual(tolerance * Math.max(1, Math.abs(e)));
  }
}

function expectSameResult(a: DsaSparseMlaResult, b: DsaSparseMlaResult): void {
  expectClose(a.out, b.out);
  expectClose(a.lse, b.lse);
  expectClose(a.maxLogits, b.maxLogits);
}

describe('dsaSparseMlaPrefillReference: golden cases by hand', () => {
  it('two tokens: weights 1/4, 3/4; lse ln 4; max ln 3', () => {
    const r = dsaSparseMlaPrefillReference(handProblem(TWO.q, TWO.kv, [0, 1], { smScale: Math.log(3) }));
    expect(r.out[0]).toBeCloseTo(0.75, 6);
    expect(r.out[1]).toBeCloseTo(7, 5);
    expect(r.out.subarray(2).every((v) => v === 0)).toBe(true);
    expect(r.lse[0]).toBeCloseTo(Math.log(4), 6);
    expect(r.maxLogits[0]).toBeCloseTo(Math.log(3), 6);
  });

  it('a duplicate counts as often as it appears (a plain gather + softmax): [0, 1, 1] gives weights 1/7, 3/7, 3/7', () => {
    const r = dsaSparseMlaPrefillReference(handProblem(TWO.q, TWO.kv, [0, 1, 1], { smScale: Math.log(3) }));
    expect(r.out[1]).toBeCloseTo(52 / 7, 5);
    expect(r.lse[0]).toBeCloseTo(Math.log(7), 6);
  });

  it('a sink of ln 4 halves out (e^lse = 4) and leaves lse and max alone', () => {
    const x = handProblem(TWO.q, TWO.kv, [1, 0], { smScale: Math.log(3), attnSink: Float32Array.of(Math.log(4)) });
    const r = dsaSparseMlaPrefillReference(x);
    expect(r.out[1]).toBeCloseTo(3.5, 5);
    expect(r.lse[0]).toBeCloseTo(Math.log(4), 6);
  });

  it('V is the first 512 dims: the RoPE dims only move the scores', () => {
    const r = dsaSparseMlaPrefillReference(
      handProblem(
        [{ 575: 1 }],
        [
          { 575: 5, 3: 2 },
          { 575: 5 - Math.log(3), 3: 6 },
        ],
        [0, 1],
      ),
    );
    expect(r.out[3]).toBeCloseTo(0.75 * 2 + 0.25 * 6, 5);
    expect(r.out[511]).toBe(0);
    expect(r.maxLogits[0]).toBe(5);
  });

  it('a row with no valid token: out 0, lse +∞, max −∞, with or without a sink', () => {
    for (const attnSink of [undefined, Float32Array.of(2)]) {
      const x = handProblem(TWO.q, TWO.kv, [-1, 2, -(2 ** 31), 2 ** 31 - 1], { ...(attnSink ? { attnSink } : {}) });
      const r = dsaSparseMlaPrefillReferenceWithBound(x);
      expect(r.out.every((v) => v === 0)).toBe(true);
      expect([r.lse[0], r.maxLogits[0]]).toEqual([Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]);
      expect(r.bound.out.every((v) => v === 0)).toBe(true);
    }
  });

  it('topk_length 0 empties a row; 1 keeps only the first entry', () => {
    const x = handProblem(TWO.q, TWO.kv, [1, 0], { smScale: Math.log(3) });
    expect(dsaSparseMlaPrefillReference({ ...x, topkLength: Int32Array.of(0) }).lse[0]).toBe(Number.POSITIVE_INFINITY);
    const one = dsaSparseMlaPrefillReference({ ...x, topkLength: Int32Array.of(1) });
    expect(one.out[1]).toBe(8);
    expect(one.lse[0]).toBeCloseTo(Math.log(3), 6);
  });
});

/** A small random problem (hQ 1–3, topk 1–10, sKv 1–12) with invalid entries and duplicates. */
const smallProblems = fc
  .record({
    seed: fc.integer(),
    sQ: fc.integer({ min: 1, max: 3 }),
    hQ: fc.integer({ min: 1, max: 3 }),
    sKv: fc.integer({ min: 1, max: 12 }),
    topk: fc.integer({ min: 1, max: 10 }),
  })
  .map(({ seed, ...sizes }) =>
    dsaRandomSparseMlaPrefillInput({ ...sizes, invalidRate: 0.2, duplicateRate: 0.2, sink: false }, new Prng(seed)),
  );

/** The same problem with each row's list rewritten by `f` (a new topk). */
function mapRows(x: DsaSparseMlaPrefillInput, f: (row: number[], t: number) => number[]): DsaSparseMlaPrefillInput {
  const rows = Array.from({ length: x.sQ }, (_, t) => f(Array.from(x.indices.subarray(t * x.topk, (t + 1) * x.topk)), t));
  const topk = rows[0]!.length;
  return { ...x, topk, indices: Int32Array.from(rows.flat()) };
}

describe('dsaSparseMlaPrefillReference: algebraic properties', () => {
  const runs = { numRuns: 60, seed: SEED };

  it('permuting an index list leaves the result unchanged', () => {
    fc.assert(
      fc.property(smallProblems, fc.integer(), (x, s) => {
        const rng = new Prng(s);
        const shuffled = mapRows(x, (row) =>
          row
            .map((v) => [rng.nextFloat(), v] as const)
            .sort((a, b) => a[0] - b[0])
            .map(([, v]) => v),
        );
        expectSameResult(dsaSparseMlaPrefillReference(shuffled), dsaSparseMlaPrefillReference(x));
      }),
      runs,
    );
  });

  it('an invalid entry equals its absence (−1, sKv, past it, other negatives)', () => {
    fc.assert(
      fc.property(smallProblems, fc.nat(), fc.constantFrom(-1, -5, 0, 1, 2 ** 31 - 1, -(2 ** 31)), (x, at, kind) => {
        const bad = kind >= 0 && kind < 2 ? x.sKv + kind : kind;
        const grown = mapRows(x, (row) => [...row.slice(0, at % (row.length + 1)), bad, ...row.slice(at % (row.length + 1))]);
        expectSameResult(dsaSparseMlaPrefillReference(grown), dsaSparseMlaPrefillReference(x));
      }),
      runs,
    );
  });

  it('topk_length = n equals the list truncated to n', () => {
    fc.assert(
      fc.property(smallProblems, fc.nat(), (x, k) => {
        const n = 1 + (k % x.topk);
        const lengths = Int32Array.from({ length: x.sQ }, () => n);
        expectSameResult(
          dsaSparseMlaPrefillReference({ ...x, topkLength: lengths }),
          dsaSparseMlaPrefillReference(mapRows(x, (row) => row.slice(0, n))),
        );
      }),
      runs,
    );
  });

  it('the weights sum to 1: rows sharing their first 512 dims give out = that V row', () => {
    fc.assert(
      fc.property(smallProblems, (x) => {
        const kv = x.kv.slice();
        for (let s = 1; s < x.sKv; s++) kv.copyWithin(s * DQK, 0, DV);
        const r = dsaSparseMlaPrefillReference({ ...x, kv });
        for (let row = 0; row < x.sQ * x.hQ; row++) {
          if (r.lse[row] === Number.POSITIVE_INFINITY) continue;
          expectClose(r.out.subarray(row * DV, (row + 1) * DV), kv.subarray(0, DV));
        }
      }),
      runs,
    );
  });

  it('a sink of −∞ is no sink; a finite sink only scales out, by e^lse / (e^lse + e^sink)', () => {
    fc.assert(
      fc.property(smallProblems, fc.float({ min: -8, max: 8, noNaN: true }), (x, sink) => {
        const plain = dsaSparseMlaPrefillReference(x);
        expectSameResult(dsaSparseMlaPrefillReference({ ...x, attnSink: new Float32Array(x.hQ).fill(Number.NEGATIVE_INFINITY) }), plain);
        const sunk = dsaSparseMlaPrefillReference({ ...x, attnSink: new Float32Array(x.hQ).fill(sink) });
        expectClose(sunk.lse, plain.lse);
        const scaled = plain.out.map((v, i) => {
          const lse = plain.lse[Math.floor(i / DV)]!;
          return lse === Number.POSITIVE_INFINITY ? 0 : v / (1 + Math.exp(Math.fround(sink) - lse));
        });
        expectClose(sunk.out, scaled, 1e-5);
      }),
      runs,
    );
  });

  it('max ≤ lse ≤ max + ln(valid count); empty rows give 0, +∞, −∞', () => {
    fc.assert(
      fc.property(smallProblems, (x) => {
        const r = dsaSparseMlaPrefillReference(x);
        for (let row = 0; row < x.sQ * x.hQ; row++) {
          const t = Math.floor(row / x.hQ);
          const valid = Array.from(x.indices.subarray(t * x.topk, (t + 1) * x.topk)).filter((i) => i >= 0 && i < x.sKv).length;
          if (valid === 0) {
            expect([r.lse[row], r.maxLogits[row]]).toEqual([Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]);
            expect(r.out.subarray(row * DV, (row + 1) * DV).every((v) => v === 0)).toBe(true);
          } else {
            expect(r.lse[row]!).toBeGreaterThanOrEqual(r.maxLogits[row]!);
            expect(r.lse[row]!).toBeLessThanOrEqual(Math.fround(r.maxLogits[row]! + Math.log(valid)) + 1e-6);
          }
        }
      }),
      runs,
    );
  });
});

describe('dsaSparseMlaDecodeReference', () => {
  it('equals the prefill over the flattened batch (same rows, topk_length per sequence), lse and max in [b][hQ][sQ]', () => {
    for (const [sQ, topkLength] of [
      [1, false],
      [2, true],
      [2, false],
    ] as const) {
      const { problem, latent, numPages } = dsaRandomSparseMlaDecodeInput(
        { b: 3, sQ, hQ: 4, topk: 20, numPages: 1, invalidRate: 0.2, topkLength, sink: true },
        new Prng(sQ + (topkLength ? 10 : 0)),
      );
      const tokens = numPages * 64;
      const decode = dsaSparseMlaDecodeReference({ ...problem, readRow: dsaSparseMlaRowsReader(latent, tokens) });
      const lengths =
        problem.topkLength === undefined
          ? {}
          : { topkLength: Int32Array.from({ length: 3 * sQ }, (_, r) => problem.topkLength![Math.floor(r / sQ)]!) };
      const prefill = dsaSparseMlaPrefillReference({ ...problem, ...lengths, kv: latent, sKv: tokens, sQ: 3 * sQ });
      expect(decode.out).toEqual(prefill.out);
      const transposed = (a: Float32Array): number[] =>
        Array.from({ length: a.length }, (_, i) => {
          const [bi, h, s] = [Math.floor(i / (4 * sQ)), Math.floor(i / sQ) % 4, i % sQ];
          return a[(bi * sQ + s) * 4 + h]!;
        });
      expect(Array.from(decode.lse)).toEqual(transposed(prefill.lse));
      expect(Array.from(decode.maxLogits)).toEqual(transposed(prefill.maxLogits));
    }
  });

  it('a slot the reader does not know is invalid; −1 is never read', () => {
    const rows = dsaRandomSparseMlaRows(2, new Prng(5));
    const read: number[] = [];
    const readRow = (slot: number): Float32Array | undefined => (
      read.push(slot),
      slot < 2 ? rows.subarray(slot * DQK, (slot + 1) * DQK) : undefined
    );
    const q = dsaRandomSparseMlaRows(64, new Prng(6));
    const base = { q, b: 1, sQ: 1, hQ: 64, topk: 3, smScale: 0.135234 };
    const withJunk = dsaSparseMlaDecodeReference({ ...base, indices: Int32Array.of(1, -1, 9999), readRow });
    const plain = dsaSparseMlaDecodeReference({ ...base, topk: 1, indices: Int32Array.of(1), readRow });
    expect(withJunk).toEqual(plain);
    expect(read).not.toContain(-1);
  });
});

describe('sparse MLA references: argument errors', () => {
  const x = handProblem(TWO.q, TWO.kv, [0, 1]);
  it.each([
    ['smScale', { smScale: 0 }],
    ['smScale', { smScale: Number.NaN }],
    ['topkLength[0]', { topkLength: Int32Array.of(3) }],
    ['topkLength', { topkLength: Int32Array.of(1, 1) }],
    ['attnSink[0]', { attnSink: Float32Array.of(Number.POSITIVE_INFINITY) }],
    ['q', { q: new Float32Array(5) }],
    ['indices', { indices: Int32Array.of(0) }],
    ['q[3]', { q: new Float32Array(DQK).fill(Number.NaN, 3) }],
  ] as const)('%s', (argument, patch) => {
    expect(() => dsaSparseMlaPrefillReference({ ...x, ...patch })).toThrow(DsaArgumentError);
    try {
      dsaSparseMlaPrefillReference({ ...x, ...patch });
    } catch (e) {
      expect((e as DsaArgumentError).argument).toBe(argument);
    }
  });

  it('a reader row of the wrong length', () => {
    const base = { q: new Float32Array(DQK), b: 1, sQ: 1, hQ: 1, topk: 1, smScale: 1, indices: Int32Array.of(0) };
    expect(() => dsaSparseMlaDecodeReference({ ...base, readRow: () => new Float32Array(512) })).toThrow(/readRow\(0\)/);
  });
});
