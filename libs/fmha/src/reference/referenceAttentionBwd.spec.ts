import fc from 'fast-check';
import { ArgumentError, decode } from '@tilekit/numeric';
import { describe, expect, it } from 'vitest';
import { causalBottomRight, causalTopLeft, noMask } from '../mask/attentionMaskSpec.ts';
import type { AttentionBwdArgs } from './attentionBwdArgs.ts';
import { attentionBwdTolerance, attentionBwdToleranceFor } from './attentionBwdTolerance.ts';
import { attentionLseIndex, type AttentionFwdArgs, type AttentionOperand, type AttentionStorageDType } from './attentionFwdArgs.ts';
import { packedAttentionStrides, type AttentionLayout, type AttentionTensorStrides } from './attentionTensorLayout.ts';
import { naiveAttentionFwd } from './naiveAttentionFwd.ts';
import { referenceAttentionBwd } from './referenceAttentionBwd.ts';
import { referenceAttentionFwd } from './referenceAttentionFwd.ts';
import {
  attentionTestHash as hashValue,
  attentionTestOperand as operand,
  attentionMaskArb,
  type AttentionTestShape,
  type AttentionTestDims as Dims,
} from './testing/attentionTestTensors.ts';

const maskArb = attentionMaskArb(3);

interface Shape extends AttentionTestShape {
  readonly layout: AttentionLayout;
  readonly scale: number;
}

const shapeArb = (dtypes: readonly AttentionStorageDType[], maxLen: number): fc.Arbitrary<Shape> =>
  fc
    .record({
      dtype: fc.constantFrom(...dtypes),
      batch: fc.integer({ min: 1, max: 2 }),
      nheadK: fc.integer({ min: 1, max: 2 }),
      ratio: fc.constantFrom(1, 2),
      hdimQ: fc.integer({ min: 1, max: 3 }),
      hdimV: fc.integer({ min: 1, max: 3 }),
      group: fc.boolean(),
      lens: fc.array(fc.tuple(fc.integer({ min: 0, max: maxLen }), fc.integer({ min: 0, max: maxLen }), fc.nat(1)), {
        minLength: 2,
        maxLength: 2,
      }),
      layout: fc.constantFrom('bhsd' as const, 'bshd' as const),
      mask: maskArb,
      scale: fc.constantFrom(0.25, 0.5, 0.75),
      seed: fc.integer({ min: 0, max: 2 ** 30 }),
    })
    .map(({ lens, ...s }) => {
      const used = lens.slice(0, s.batch);
      return {
        ...s,
        seqlensQ: s.group ? used.map((l) => l[0]) : used.map(() => used[0]![0]),
        seqlensK: s.group ? used.map((l) => l[1]) : used.map(() => used[0]![1]),
        padK: s.group ? used.map((l) => l[2]) : used.map(() => 0),
      };
    });

const starts = (lens: readonly number[]): number[] => lens.reduce<number[]>((acc, l) => [...acc, acc[acc.length - 1]! + l], [0]);

/** The forward problem of a shape (Q/K/V in `layout`, packed) and its dims. */
function fwdOf(
  s: Shape,
  overrides: { q?: AttentionOperand; k?: AttentionOperand; v?: AttentionOperand } = {},
): { args: AttentionFwdArgs; rowsQ: number; rowsK: number; batches: number } {
  const nheadQ = s.nheadK * s.ratio;
  const slotsK = s.seqlensK.map((l, b) => l + s.padK[b]!);
  const rowsQ = s.group ? starts(s.seqlensQ)[s.batch]! : s.seqlensQ[0]!;
  const rowsK = s.group ? starts(slotsK)[s.batch]! : s.seqlensK[0]!;
  const batches = s.group ? 1 : s.batch;
  const make = (nhead: number, rows: number, hdim: number, salt: number): AttentionOperand =>
    operand(s.dtype, packedAttentionStrides(s.layout, nhead, rows, hdim), { batches, nhead, rows, hdim }, hashValue(s.seed + salt));
  const mode = s.group
    ? { seqstartQ: starts(s.seqlensQ), seqstartK: starts(slotsK), ...(s.padK.some((p) => p > 0) ? { seqlenK: s.seqlensK } : {}) }
    : { seqlenQ: s.seqlensQ[0]!, seqlenK: s.seqlensK[0]! };
  return {
    args: {
      batch: s.batch,
      nheadQ,
      nheadK: s.nheadK,
      hdimQ: s.hdimQ,
      hdimV: s.hdimV,
      ...mode,
      q: overrides.q ?? make(nheadQ, rowsQ, s.hdimQ, 1),
      k: overrides.k ?? make(s.nheadK, rowsK, s.hdimQ, 2),
      v: overrides.v ?? make(s.nheadK, rowsK, s.hdimV, 3),
      oStrides: packedAttentionStrides('bhsd', nheadQ, rowsQ, s.hdimV),
      mask: s.mask,
      scale: s.scale,
    },
    rowsQ,
    rowsK,
    batches,
  };
}

/** The backward problem: the forward reference's O (fp32) and LSE, and dO of the shape's dtype. */
function bwdOf(s: Shape): AttentionBwdArgs {
  const { args, rowsQ, batches } = fwdOf(s);
  const fwd = referenceAttentionFwd(args);
  const nheadQ = s.nheadK * s.ratio;
  const oStrides = packedAttentionStrides('bhsd', nheadQ, rowsQ, s.hdimV);
  const { oStrides: _unused, ...rest } = args;
  return {
    ...rest,
    o: { dtype: 'fp32', data: fwd.o, strides: oStrides },
    dO: operand(s.dtype, oStrides, { batches, nhead: nheadQ, rows: rowsQ, hdim: s.hdimV }, hashValue(s.seed + 4)),
    lse: fwd.lse,
  };
}

/** Visits every (batch slot, head, row, dim) of a packed-in-`strides` tensor with its offset. */
function each(strides: AttentionTensorStrides, dims: Dims, f: (at: number, b: number, h: number, r: number, d: number) => void): void {
  for (let b = 0; b < dims.batches; b++)
    for (let h = 0; h < dims.nhead; h++)
      for (let r = 0; r < dims.rows; r++)
        for (let d = 0; d < dims.hdim; d++) f(b * strides.batch + h * strides.head + r * strides.row + d, b, h, r, d);
}

describe('referenceAttentionBwd', () => {
  it('equals central finite differences of the naive forward’s L = Σ dO∘O (random shapes, masks, GQA, varlen with padding and empty sequences)', () => {
    const eps = 2 ** -10;
    fc.assert(
      fc.property(shapeArb(['fp32'], 4), (s) => {
        const bwd = bwdOf(s);
        const ref = referenceAttentionBwd(bwd);
        const { args, rowsQ, rowsK, batches } = fwdOf(s);
        const nheadQ = s.nheadK * s.ratio;
        const g = bwd.dO.data as Float32Array;
        const loss = (a: AttentionFwdArgs): number => naiveAttentionFwd(a).o.reduce((acc, o, i) => acc + o * g[i]!, 0);
        const check = (name: 'q' | 'k' | 'v', grad: Float32Array, gradStrides: AttentionTensorStrides, dims: Dims): void => {
          const op = args[name];
          each(op.strides, dims, (at, b, h, r, d) => {
            const data = op.data as Float32Array;
            const plus = data.slice();
            const minus = data.slice();
            plus[at] = plus[at]! + eps;
            minus[at] = minus[at]! - eps;
            const fd = (loss({ ...args, [name]: { ...op, data: plus } }) - loss({ ...args, [name]: { ...op, data: minus } })) / (2 * eps);
            const got = grad[b * gradStrides.batch + h * gradStrides.head + r * gradStrides.row + d]!;
            if (!(Math.abs(got - fd) <= 5e-5 + 1e-4 * Math.abs(fd)))
              expect.fail(`d${name}[b${b} h${h} r${r} d${d}] = ${got}, finite difference ${fd}`);
          });
        };
        check('q', ref.dq, ref.args.dqStrides, { batches, nhead: nheadQ, rows: rowsQ, hdim: s.hdimQ });
        check('k', ref.dk, ref.args.dkStrides, { batches, nhead: s.nheadK, rows: rowsK, hdim: s.hdimQ });
        check('v', ref.dv, ref.args.dvStrides, { batches, nhead: s.nheadK, rows: rowsK, hdim: s.hdimV });
      }),
      { numRuns: 60 },
    );
  });

  it('identities of any correct backward: D = rowsum(dO∘O); Σ_j dV_j = Σ over kept rows of dO_i; Σ⟨dQ, Q⟩ = Σ⟨dK, K⟩ (S is bilinear in Q and K)', () => {
    fc.assert(
      fc.property(shapeArb(['fp16', 'bf16', 'fp32'], 9), (s) => {
        const bwd = bwdOf(s);
        const ref = referenceAttentionBwd(bwd);
        const a = ref.args;
        const naive = naiveAttentionFwd(fwdOf(s).args);
        const values = (op: AttentionOperand): Float64Array =>
          Float64Array.from(op.data, (x) => (op.dtype === 'fp32' ? x : decode(op.dtype, x)));
        const [q, k, dO, o] = [values(bwd.q), values(bwd.k), values(bwd.dO), values(bwd.o)];
        const ratio = a.nheadQ / a.nheadK;
        const rowQ = (st: AttentionTensorStrides, b: number, h: number, i: number): number =>
          a.groupMode ? (a.rowStartsQ[b]! + i) * st.row + h * st.head : b * st.batch + h * st.head + i * st.row;
        const rowK = (st: AttentionTensorStrides, b: number, h: number, j: number): number =>
          a.groupMode ? (a.rowStartsK[b]! + j) * st.row + h * st.head : b * st.batch + h * st.head + j * st.row;
        let qdq = 0;
        let kdk = 0;
        for (let b = 0; b < a.batch; b++) {
          for (let hk = 0; hk < a.nheadK; hk++) {
            for (let d = 0; d < a.hdimV; d++) {
              let sumDv = 0;
              for (let j = 0; j < a.seqlensK[b]!; j++) sumDv += ref.dv[rowK(a.dvStrides, b, hk, j) + d]!;
              let sumDo = 0;
              for (let h = hk * ratio; h < (hk + 1) * ratio; h++)
                for (let i = 0; i < a.seqlensQ[b]!; i++)
                  if (Number.isFinite(naive.lse[attentionLseIndex(a, b, h, i)]!)) sumDo += dO[rowQ(bwd.dO.strides, b, h, i) + d]!;
              expect(sumDv).toBeCloseTo(sumDo, 4);
            }
            for (let j = 0; j < a.seqlensK[b]!; j++)
              for (let d = 0; d < a.hdimQ; d++) kdk += ref.dk[rowK(a.dkStrides, b, hk, j) + d]! * k[rowK(bwd.k.strides, b, hk, j) + d]!;
          }
          for (let h = 0; h < a.nheadQ; h++)
            for (let i = 0; i < a.seqlensQ[b]!; i++) {
              let dd = 0;
              for (let d = 0; d < a.hdimV; d++) dd += dO[rowQ(bwd.dO.strides, b, h, i) + d]! * o[rowQ(bwd.o.strides, b, h, i) + d]!;
              expect(ref.d[attentionLseIndex(a, b, h, i)]).toBeCloseTo(dd, 5);
              for (let d = 0; d < a.hdimQ; d++) qdq += ref.dq[rowQ(a.dqStrides, b, h, i) + d]! * q[rowQ(bwd.q.strides, b, h, i) + d]!;
            }
        }
        expect(qdq).toBeCloseTo(kdk, 3);
      }),
      { numRuns: 80 },
    );
  });

  it('GQA: dQ equals the replicated-K/V problem’s, dK/dV are its per-group sums', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 }),
        fc.integer({ min: 2, max: 3 }),
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 0, max: 1000 }),
        (nheadK, ratio, n, seed) => {
          const nheadQ = nheadK * ratio;
          const st = (nhead: number) => packedAttentionStrides('bhsd', nhead, n, 3);
          const dims = (nhead: number) => ({ batches: 1, nhead, rows: n, hdim: 3 });
          const kv = (nhead: number, salt: number, map: (h: number) => number) =>
            operand('fp16', st(nhead), dims(nhead), (b, h, r, d) => hashValue(seed + salt)(b, map(h), r, d));
          const q = operand('fp16', st(nheadQ), dims(nheadQ), hashValue(seed));
          const base = { batch: 1, nheadQ, hdimQ: 3, hdimV: 3, seqlenQ: n, seqlenK: n, q, mask: causalBottomRight };
          const gqaFwd = { ...base, nheadK, k: kv(nheadK, 1, (h) => h), v: kv(nheadK, 2, (h) => h) };
          const fullFwd = {
            ...base,
            nheadK: nheadQ,
            k: kv(nheadQ, 1, (h) => Math.floor(h / ratio)),
            v: kv(nheadQ, 2, (h) => Math.floor(h / ratio)),
          };
          const f = referenceAttentionFwd(gqaFwd);
          const extra = {
            o: { dtype: 'fp32' as const, data: f.o, strides: st(nheadQ) },
            lse: f.lse,
            dO: operand('bf16', st(nheadQ), dims(nheadQ), hashValue(seed + 9)),
          };
          const gqa = referenceAttentionBwd({ ...gqaFwd, ...extra });
          const full = referenceAttentionBwd({ ...fullFwd, ...extra });
          expect([...gqa.dq]).toEqual([...full.dq]);
          for (let hk = 0; hk < nheadK; hk++)
            for (let x = 0; x < n * 3; x++) {
              let sk = 0;
              let sv = 0;
              for (let h = hk * ratio; h < (hk + 1) * ratio; h++) {
                sk += full.dk[h * n * 3 + x]!;
                sv += full.dv[h * n * 3 + x]!;
              }
              expect(gqa.dk[hk * n * 3 + x]).toBeCloseTo(sk, 5);
              expect(gqa.dv[hk * n * 3 + x]).toBeCloseTo(sv, 5);
            }
        },
      ),
    );
  });

  it('golden: one key gives dV = Σ_i dO_i and dQ = dK = 0; fully masked rows contribute nothing and get dQ = 0', () => {
    const st = (rows: number) => packedAttentionStrides('bhsd', 1, rows, 2);
    const dims = (rows: number) => ({ batches: 1, nhead: 1, rows, hdim: 2 });
    const fwd = {
      batch: 1,
      nheadQ: 1,
      hdimQ: 2,
      seqlenQ: 3,
      seqlenK: 1,
      q: operand('fp16', st(3), dims(3), hashValue(1)),
      k: operand('fp16', st(1), dims(1), () => 0.5),
      v: operand('fp16', st(1), dims(1), (_b, _h, _r, d) => [3, -1][d]!),
    };
    const f = referenceAttentionFwd(fwd);
    const dO = operand('fp16', st(3), dims(3), (_b, _h, r, d) => r + d / 2);
    const r = referenceAttentionBwd({ ...fwd, o: { dtype: 'fp32', data: f.o, strides: st(3) }, lse: f.lse, dO });
    expect([...r.dv]).toEqual([0 + 1 + 2, 0.5 + 1.5 + 2.5]);
    expect([...r.dq].every((x) => Math.abs(x) < 1e-6)).toBe(true);
    expect([...r.dk].every((x) => Math.abs(x) < 1e-6)).toBe(true);
    expect([...r.d]).toEqual([0 * 3 - 0.5, 1 * 3 - 1.5, 2 * 3 - 2.5]);
    expect(r.maxKeyWeight).toBeCloseTo(3, 6);

    // Causal from the bottom right with sq 4 > sk 2: rows 0 and 1 keep nothing.
    const masked = {
      batch: 1,
      nheadQ: 1,
      hdimQ: 2,
      seqlenQ: 4,
      seqlenK: 2,
      mask: causalBottomRight,
      q: operand('fp16', st(4), dims(4), hashValue(2)),
      k: operand('fp16', st(2), dims(2), hashValue(3)),
      v: operand('fp16', st(2), dims(2), hashValue(4)),
    };
    const mf = referenceAttentionFwd(masked);
    const mr = referenceAttentionBwd({
      ...masked,
      o: { dtype: 'fp32', data: mf.o, strides: st(4) },
      lse: mf.lse,
      dO: operand('fp16', st(4), dims(4), hashValue(5)),
    });
    expect([...mr.dq.subarray(0, 4)]).toEqual([0, 0, 0, 0]);
    expect(mr.dq.subarray(4).some((x) => x !== 0)).toBe(true);
    // Rows 0, 1 change nothing in dK/dV: the same problem without them gives the same dK/dV.
    const tail = {
      ...masked,
      seqlenQ: 2,
      mask: causalBottomRight,
      q: { ...masked.q, data: masked.q.data.slice(4) as Uint16Array, strides: st(2) },
    };
    const tf = referenceAttentionFwd(tail);
    const tr = referenceAttentionBwd({
      ...tail,
      o: { dtype: 'fp32', data: tf.o, strides: st(2) },
      lse: tf.lse,
      dO: {
        ...operand('fp16', st(4), dims(4), hashValue(5)),
        data: (operand('fp16', st(4), dims(4), hashValue(5)).data as Uint16Array).slice(4),
        strides: st(2),
      },
    });
    expect([...tr.dk]).toEqual([...mr.dk]);
    expect([...tr.dv]).toEqual([...mr.dv]);
  });

  it('rejects bad arguments with typed errors naming them', () => {
    const s: Shape = {
      dtype: 'fp16',
      batch: 1,
      nheadK: 1,
      ratio: 1,
      hdimQ: 2,
      hdimV: 2,
      group: false,
      seqlensQ: [3],
      seqlensK: [3],
      padK: [0],
      layout: 'bhsd',
      mask: noMask,
      scale: 0.5,
      seed: 1,
    };
    const good = bwdOf(s);
    expect(() => referenceAttentionBwd({ ...good, lse: new Float32Array(2) })).toThrow(/lse: must hold nheadQ·rows·batches = 3 values/);
    expect(() => referenceAttentionBwd({ ...good, dO: { ...good.dO, data: new Uint16Array(2) } })).toThrow(
      /dO\.data: must hold at least 6 elements/,
    );
    expect(() => referenceAttentionBwd({ ...good, o: { ...good.o, dtype: 'fp16' } })).toThrow(/o\.data: must be a Uint16Array for fp16/);
    expect(() => referenceAttentionBwd({ ...good, dkStrides: { batch: 0, head: 1, row: 1 } })).toThrow(
      /dkStrides: row or head stride must be at least hdim = 2/,
    );
    expect(() => referenceAttentionBwd({ ...good, nheadK: 2 })).toThrow(ArgumentError);
  });
});

describe('attentionBwdTolerance', () => {
  const base = {
    dtype: 'fp16' as const,
    seqlenQ: 4096,
    seqlenK: 4096,
    hdimQ: 128,
    hdimV: 128,
    groupSize: 1,
    scale: 1 / Math.sqrt(128),
    maxAbsQ: 1,
    maxAbsK: 1,
    maxAbsV: 1,
    maxAbsO: 1,
    maxAbsDo: 1,
    maxKeyWeight: 4,
    maxAbsDpMinusD: 20,
  };

  it('grows with the key weight, |dP − D|, the group, a coarser dtype; the worst-case defaults are looser than data-driven values', () => {
    const t = attentionBwdTolerance(base);
    for (const key of ['dq', 'dk', 'dv'] as const) {
      expect(t[key].rtol).toBe(2 ** -11);
      expect(t[key].atol).toBeGreaterThan(0);
      expect(attentionBwdTolerance({ ...base, dtype: 'bf16' })[key].atol).toBeGreaterThan(t[key].atol);
    }
    expect(attentionBwdTolerance({ ...base, maxKeyWeight: 8 }).dk.atol).toBeGreaterThan(t.dk.atol);
    expect(attentionBwdTolerance({ ...base, maxKeyWeight: 8 }).dv.atol).toBeGreaterThan(t.dv.atol);
    expect(attentionBwdTolerance({ ...base, maxKeyWeight: 8 }).dq.atol).toBe(t.dq.atol); // dQ rows sum P to 1
    expect(attentionBwdTolerance({ ...base, maxAbsDpMinusD: 40 }).dq.atol).toBeGreaterThan(t.dq.atol);
    const { maxKeyWeight: _w, maxAbsDpMinusD: _g, ...worst } = base;
    const w = attentionBwdTolerance(worst);
    for (const key of ['dq', 'dk', 'dv'] as const) expect(w[key].atol).toBeGreaterThan(t[key].atol);
    expect(() => attentionBwdTolerance({ ...base, maxAbsDo: -1 })).toThrow(/maxAbsDo/);
    expect(() => attentionBwdTolerance({ ...base, groupSize: 0 })).toThrow(/groupSize/);
    // Order of magnitude: |dQ| ≤ scale·|k|·G ≈ 1.8 here; its budget stays a few percent of that.
    expect(t.dq.atol).toBeLessThan(0.05 * (base.scale * base.maxAbsDpMinusD));
  });

  it('attentionBwdToleranceFor reads the maxima from storage and the key weight and |dP − D| from the reference', () => {
    const s: Shape = {
      dtype: 'bf16',
      batch: 1,
      nheadK: 1,
      ratio: 2,
      hdimQ: 3,
      hdimV: 2,
      group: false,
      seqlensQ: [5],
      seqlensK: [4],
      padK: [0],
      layout: 'bhsd',
      mask: causalTopLeft,
      scale: 0.5,
      seed: 7,
    };
    const args = bwdOf(s);
    const ref = referenceAttentionBwd(args);
    const t = attentionBwdToleranceFor(args, ref);
    const maxOf = (op: AttentionOperand) =>
      Math.max(...Array.from(op.data, (x) => Math.abs(op.dtype === 'fp32' ? x : decode(op.dtype, x))));
    expect(t).toEqual(
      attentionBwdTolerance({
        dtype: 'bf16',
        seqlenQ: 5,
        seqlenK: 4,
        hdimQ: 3,
        hdimV: 2,
        groupSize: 2,
        scale: 0.5,
        maxAbsQ: maxOf(args.q),
        maxAbsK: maxOf(args.k),
        maxAbsV: maxOf(args.v),
        maxAbsO: maxOf(args.o),
        maxAbsDo: maxOf(args.dO),
        maxKeyWeight: ref.maxKeyWeight,
        maxAbsDpMinusD: ref.maxAbsDpMinusD,
      }),
    );
    expect(ref.maxKeyWeight).toBeGreaterThan(1);
    expect(ref.maxKeyWeight).toBeLessThanOrEqual(2 * 5 + 1e-9);
  });
});
