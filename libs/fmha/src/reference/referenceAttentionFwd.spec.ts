import fc from 'fast-check';
import { ArgumentError, defaultTolerance } from '@tilekit/numeric';
import { describe, expect, it } from 'vitest';
import { causalBottomRight, causalTopLeft, slidingWindowMask } from '../mask/attentionMaskSpec.ts';
import { attentionLseIndex, type AttentionFwdArgs, type AttentionOperand } from './attentionFwdArgs.ts';
import { attentionFwdTolerance, attentionFwdToleranceFor } from './attentionFwdTolerance.ts';
import { packedAttentionStrides, type AttentionLayout, type AttentionTensorStrides } from './attentionTensorLayout.ts';
import { naiveAttentionFwd } from './naiveAttentionFwd.ts';
import { referenceAttentionFwd } from './referenceAttentionFwd.ts';
import {
  attentionTestHash as hashValue,
  attentionTestOperand as operand,
  attentionMaskArb,
  type AttentionTestShape,
} from './testing/attentionTestTensors.ts';

interface Shape extends AttentionTestShape {
  readonly layoutIn: AttentionLayout;
  readonly layoutOut: AttentionLayout;
  readonly rowPad: number;
  readonly scale?: number;
}

const maskArb = attentionMaskArb(6);

const shapeArb: fc.Arbitrary<Shape> = fc
  .record({
    dtype: fc.constantFrom('fp16' as const, 'bf16' as const, 'fp32' as const),
    batch: fc.integer({ min: 1, max: 3 }),
    nheadK: fc.integer({ min: 1, max: 2 }),
    ratio: fc.constantFrom(1, 2, 3),
    hdimQ: fc.integer({ min: 1, max: 9 }),
    hdimV: fc.integer({ min: 1, max: 9 }),
    group: fc.boolean(),
    lens: fc.array(fc.tuple(fc.integer({ min: 0, max: 13 }), fc.integer({ min: 0, max: 13 }), fc.integer({ min: 0, max: 2 })), {
      minLength: 3,
      maxLength: 3,
    }),
    layoutIn: fc.constantFrom('bhsd' as const, 'bshd' as const),
    layoutOut: fc.constantFrom('bhsd' as const, 'bshd' as const),
    rowPad: fc.constantFrom(0, 0, 3),
    mask: maskArb,
    scale: fc.option(fc.double({ min: 0.05, max: 2, noNaN: true }), { nil: undefined }),
    seed: fc.integer({ min: 0, max: 2 ** 30 }),
  })
  .map(({ lens, ...s }) => {
    const used = lens.slice(0, s.batch);
    const seqlensQ = s.group ? used.map((l) => l[0]) : used.map(() => used[0]![0]);
    const seqlensK = s.group ? used.map((l) => l[1]) : used.map(() => used[0]![1]);
    const { scale, ...rest } = s;
    return {
      ...rest,
      ...(scale === undefined ? {} : { scale }),
      seqlensQ,
      seqlensK,
      padK: s.group ? used.map((l) => l[2]) : used.map(() => 0),
    };
  });

/** Strides of a tensor in `layout` with `rowPad` extra elements per row. */
function stridesOf(layout: AttentionLayout, nhead: number, rows: number, hdim: number, rowPad: number): AttentionTensorStrides {
  const packed = packedAttentionStrides(layout, nhead, rows, hdim + rowPad);
  return { ...packed };
}

function argsOf(s: Shape): AttentionFwdArgs {
  const nheadQ = s.nheadK * s.ratio;
  const starts = (lens: readonly number[]): number[] => lens.reduce<number[]>((acc, l) => [...acc, acc[acc.length - 1]! + l], [0]);
  const slotsK = s.seqlensK.map((l, b) => l + s.padK[b]!);
  const rowsQ = s.group ? starts(s.seqlensQ)[s.batch]! : s.seqlensQ[0]!;
  const rowsK = s.group ? starts(slotsK)[s.batch]! : s.seqlensK[0]!;
  const batches = s.group ? 1 : s.batch;
  const make = (nhead: number, rows: number, hdim: number, salt: number): AttentionOperand =>
    operand(s.dtype, stridesOf(s.layoutIn, nhead, rows, hdim, s.rowPad), { batches, nhead, rows, hdim }, hashValue(s.seed + salt));
  const mode = s.group
    ? { seqstartQ: starts(s.seqlensQ), seqstartK: starts(slotsK), ...(s.padK.some((p) => p > 0) ? { seqlenK: s.seqlensK } : {}) }
    : { seqlenQ: s.seqlensQ[0]!, seqlenK: s.seqlensK[0]! };
  return {
    batch: s.batch,
    nheadQ,
    nheadK: s.nheadK,
    hdimQ: s.hdimQ,
    hdimV: s.hdimV,
    ...mode,
    q: make(nheadQ, rowsQ, s.hdimQ, 1),
    k: make(s.nheadK, rowsK, s.hdimQ, 2),
    v: make(s.nheadK, rowsK, s.hdimV, 3),
    oStrides: stridesOf(s.layoutOut, nheadQ, rowsQ, s.hdimV, s.rowPad),
    mask: s.mask,
    ...(s.scale === undefined ? {} : { scale: s.scale }),
  };
}

const fp32 = defaultTolerance('fp32');
const close = (got: number, want: number): boolean =>
  Number.isFinite(want) ? Math.abs(got - want) <= fp32.atol + fp32.rtol * Math.abs(want) : got === want;

describe('referenceAttentionFwd', () => {
  it('equals the naive independent formula over random shapes, masks, GQA, layouts, strides and varlen (incl. empty sequences)', () => {
    fc.assert(
      fc.property(shapeArb, (s) => {
        const args = argsOf(s);
        const ref = referenceAttentionFwd(args);
        const naive = naiveAttentionFwd(args);
        expect(ref.o.length).toBe(naive.o.length);
        ref.o.forEach((v, i) => {
          if (!close(v, naive.o[i]!)) expect.fail(`o[${i}] = ${v}, naive ${naive.o[i]}`);
        });
        ref.lse.forEach((v, i) => {
          if (!close(v, naive.lse[i]!)) expect.fail(`lse[${i}] = ${v}, naive ${naive.lse[i]}`);
        });
        expect(ref.o.every(Number.isFinite)).toBe(true);
        expect(ref.lse.every((v) => !Number.isNaN(v) && v !== Infinity)).toBe(true);
      }),
    );
  });

  it('golden: one key gives O = v and LSE = scale·⟨q, k⟩; equal logits under a causal mask give the running mean of V and LSE = ln(i + 1)', () => {
    const strides = packedAttentionStrides('bhsd', 1, 1, 2);
    const single = referenceAttentionFwd({
      batch: 1,
      nheadQ: 1,
      hdimQ: 2,
      seqlenQ: 1,
      seqlenK: 1,
      q: operand('fp16', strides, { batches: 1, nhead: 1, rows: 1, hdim: 2 }, (_b, _h, _r, d) => [1, 2][d]!),
      k: operand('fp16', strides, { batches: 1, nhead: 1, rows: 1, hdim: 2 }, (_b, _h, _r, d) => [3, -0.5][d]!),
      v: operand('fp16', strides, { batches: 1, nhead: 1, rows: 1, hdim: 2 }, (_b, _h, _r, d) => [0.25, -7][d]!),
    });
    expect([...single.o]).toEqual([0.25, -7]);
    expect(single.lse[0]).toBeCloseTo(2 / Math.SQRT2, 6);

    const n = 6;
    const s = packedAttentionStrides('bshd', 1, n, 3);
    const causal = referenceAttentionFwd({
      batch: 1,
      nheadQ: 1,
      hdimQ: 3,
      seqlenQ: n,
      seqlenK: n,
      mask: causalTopLeft,
      q: operand('bf16', s, { batches: 1, nhead: 1, rows: n, hdim: 3 }, () => 0),
      k: operand('bf16', s, { batches: 1, nhead: 1, rows: n, hdim: 3 }, (_b, _h, r, d) => r + d),
      v: operand('bf16', s, { batches: 1, nhead: 1, rows: n, hdim: 3 }, (_b, _h, r, d) => r * 2 + d),
    });
    for (let i = 0; i < n; i++) {
      expect(causal.o[i * 3]).toBeCloseTo(i, 6); // mean of 2r over r ≤ i
      expect(causal.lse[i]).toBeCloseTo(Math.log(i + 1), 6);
    }
  });

  it('fully masked rows give O = 0 and LSE = −∞ (never NaN), also for a batch without keys', () => {
    const sq = 9;
    const sk = 4;
    const st = (rows: number) => packedAttentionStrides('bhsd', 2, rows, 5);
    const r = referenceAttentionFwd({
      batch: 2,
      nheadQ: 2,
      hdimQ: 5,
      seqlenQ: sq,
      seqlenK: sk,
      mask: causalBottomRight, // rows i < sq − sk keep nothing
      q: operand('fp16', st(sq), { batches: 2, nhead: 2, rows: sq, hdim: 5 }, hashValue(1)),
      k: operand('fp16', st(sk), { batches: 2, nhead: 2, rows: sk, hdim: 5 }, hashValue(2)),
      v: operand('fp16', st(sk), { batches: 2, nhead: 2, rows: sk, hdim: 5 }, hashValue(3)),
    });
    for (let b = 0; b < 2; b++)
      for (let h = 0; h < 2; h++)
        for (let i = 0; i < sq; i++) {
          const lse = r.lse[attentionLseIndex(r.args, b, h, i)]!;
          const row = [...r.o.subarray(((b * 2 + h) * sq + i) * 5, ((b * 2 + h) * sq + i + 1) * 5)];
          if (i < sq - sk) {
            expect(lse).toBe(-Infinity);
            expect(row).toEqual([0, 0, 0, 0, 0]);
          } else {
            expect(Number.isFinite(lse)).toBe(true);
            expect(row.some((v) => v !== 0)).toBe(true);
          }
        }
    const empty = referenceAttentionFwd({
      batch: 2,
      nheadQ: 1,
      hdimQ: 2,
      seqstartQ: [0, 3, 5],
      seqstartK: [0, 0, 4],
      mask: slidingWindowMask(1, 1),
      q: operand('fp16', packedAttentionStrides('bhsd', 1, 5, 2), { batches: 1, nhead: 1, rows: 5, hdim: 2 }, hashValue(4)),
      k: operand('fp16', packedAttentionStrides('bhsd', 1, 4, 2), { batches: 1, nhead: 1, rows: 4, hdim: 2 }, hashValue(5)),
      v: operand('fp16', packedAttentionStrides('bhsd', 1, 4, 2), { batches: 1, nhead: 1, rows: 4, hdim: 2 }, hashValue(6)),
    });
    expect([...empty.lse.subarray(0, 3)]).toEqual([-Infinity, -Infinity, -Infinity]);
    expect([...empty.o.subarray(0, 6)]).toEqual([0, 0, 0, 0, 0, 0]);
    expect(empty.lse.subarray(3).every(Number.isFinite)).toBe(true);
  });

  it('GQA: query head h reads kv head ⌊h / (nheadQ / nheadK)⌋ (same as replicating K and V per query head)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 2, max: 3 }),
        fc.integer({ min: 1, max: 7 }),
        fc.integer({ min: 0, max: 1000 }),
        (nheadK, ratio, s, seed) => {
          const nheadQ = nheadK * ratio;
          const dims = (nhead: number) => ({ batches: 1, nhead, rows: s, hdim: 4 });
          const q = operand('fp16', packedAttentionStrides('bhsd', nheadQ, s, 4), dims(nheadQ), hashValue(seed));
          const kv = (nhead: number, salt: number, map: (h: number) => number) =>
            operand('fp16', packedAttentionStrides('bhsd', nhead, s, 4), dims(nhead), (b, h, r, d) =>
              hashValue(seed + salt)(b, map(h), r, d),
            );
          const base = { batch: 1, nheadQ, hdimQ: 4, seqlenQ: s, seqlenK: s, q, mask: causalTopLeft };
          const gqa = referenceAttentionFwd({ ...base, nheadK, k: kv(nheadK, 1, (h) => h), v: kv(nheadK, 2, (h) => h) });
          const full = referenceAttentionFwd({
            ...base,
            nheadK: nheadQ,
            k: kv(nheadQ, 1, (h) => Math.floor(h / ratio)),
            v: kv(nheadQ, 2, (h) => Math.floor(h / ratio)),
          });
          expect([...gqa.o]).toEqual([...full.o]);
          expect([...gqa.lse]).toEqual([...full.lse]);
        },
      ),
    );
  });

  it('rejects bad arguments with typed errors naming them', () => {
    const st = packedAttentionStrides('bhsd', 2, 4, 4);
    const op = operand('fp16', st, { batches: 1, nhead: 2, rows: 4, hdim: 4 }, hashValue(0));
    const base: AttentionFwdArgs = { batch: 1, nheadQ: 2, hdimQ: 4, seqlenQ: 4, seqlenK: 4, q: op, k: op, v: op };
    expect(() => referenceAttentionFwd({ ...base, nheadK: 3 })).toThrow(/nheadK: must divide nheadQ = 2/);
    expect(() => referenceAttentionFwd({ ...base, seqlenQ: 5 })).toThrow(/q\.data: must hold at least/);
    expect(() => referenceAttentionFwd({ ...base, scale: 0 })).toThrow(/scale: must be a finite number > 0/);
    expect(() => referenceAttentionFwd({ ...base, q: { ...op, data: new Float32Array(32) } })).toThrow(
      /q\.data: must be a Uint16Array for fp16/,
    );
    expect(() =>
      referenceAttentionFwd({ ...base, seqlenQ: undefined, seqlenK: undefined, seqstartQ: [0, 2], seqstartK: [1, 2] } as never),
    ).toThrow(/seqstartK\[0\]: must be 0/);
    expect(() => referenceAttentionFwd({ ...base, seqstartQ: [0, 3, 2], seqstartK: [0, 1, 2], batch: 2 })).toThrow(
      /seqstartQ: must be non-decreasing/,
    );
    expect(() => referenceAttentionFwd({ ...base, seqstartQ: [0, 2], seqstartK: [0, 2], seqlenK: [3] })).toThrow(
      /seqlenK\[0\]: must be at most/,
    );
    expect(() => referenceAttentionFwd({ ...base, seqlenQ: -1 })).toThrow(ArgumentError);
  });
});

describe('attentionFwdTolerance', () => {
  it('the documented example, and the budget grows with sk, d, |v| and a coarser dtype', () => {
    const base = { dtype: 'fp16' as const, seqlenK: 4097, hdimQ: 128, scale: 1 / Math.sqrt(128), maxAbsQ: 1, maxAbsK: 1, maxAbsV: 1 };
    const t = attentionFwdTolerance(base);
    expect(t.o.atol).toBeGreaterThan(2.5e-3);
    expect(t.o.atol).toBeLessThan(3e-3);
    expect(t.o.rtol).toBe(2 ** -11);
    expect(attentionFwdTolerance({ ...base, seqlenK: 32768 }).o.atol).toBeGreaterThan(t.o.atol);
    expect(attentionFwdTolerance({ ...base, hdimQ: 256 }).lse.atol).toBeGreaterThan(t.lse.atol);
    expect(attentionFwdTolerance({ ...base, maxAbsV: 4 }).o.atol).toBeCloseTo(4 * t.o.atol, 12);
    expect(attentionFwdTolerance({ ...base, dtype: 'bf16' }).o.atol).toBeGreaterThan(8 * 2 ** -10);
    expect(() => attentionFwdTolerance({ ...base, maxAbsV: NaN })).toThrow(/maxAbsV/);
  });

  it('attentionFwdToleranceFor reads the maxima from the storage', () => {
    const st = packedAttentionStrides('bhsd', 1, 3, 2);
    const dims = { batches: 1, nhead: 1, rows: 3, hdim: 2 };
    const args: AttentionFwdArgs = {
      batch: 1,
      nheadQ: 1,
      hdimQ: 2,
      seqlenQ: 3,
      seqlenK: 3,
      q: operand('bf16', st, dims, () => 0.5),
      k: operand('bf16', st, dims, () => -2),
      v: operand('bf16', st, dims, (_b, _h, r) => r),
    };
    expect(attentionFwdToleranceFor(args)).toEqual(
      attentionFwdTolerance({ dtype: 'bf16', seqlenK: 3, hdimQ: 2, scale: 1 / Math.SQRT2, maxAbsQ: 0.5, maxAbsK: 2, maxAbsV: 2 }),
    );
  });
});
