import { fc, test } from '@fast-check/vitest';
import { roundTo } from '@tilekit/numeric';
import { describe, expect, it } from 'vitest';
import { ReferenceGemmError } from '../errors.ts';
import { referenceGemm, type GemmLayout, type ReferenceGemmOperand } from './referenceGemm.ts';

/** A dense matrix as nested arrays, for building and reading operands independently of referenceGemm. */
type Dense = number[][];

/** Store `x` (batch of rows×cols) with a layout, padded stride and batch stride. */
function store(x: Dense[], layout: GemmLayout, pad: number, batchPad: number): ReferenceGemmOperand {
  const rows = x[0]!.length;
  const cols = x[0]![0]!.length;
  const stride = (layout === 'row' ? cols : rows) + pad;
  const batchStride = (layout === 'row' ? rows : cols) * stride + batchPad;
  const data = new Float64Array(batchStride * x.length).fill(Number.NaN); // padding must never be read
  x.forEach((mat, b) =>
    mat.forEach((row, i) => row.forEach((v, j) => (data[b * batchStride + (layout === 'row' ? i * stride + j : i + j * stride)] = v))),
  );
  return { data, layout, stride, batchStride };
}

/** Read C back as dense matrices. */
function load(c: Float64Array, layout: GemmLayout, m: number, n: number, batch: number, stride: number, batchStride: number): Dense[] {
  return Array.from({ length: batch }, (_, b) =>
    Array.from({ length: m }, (_, i) =>
      Array.from({ length: n }, (_, j) => c[b * batchStride + (layout === 'row' ? i * stride + j : i + j * stride)]!),
    ),
  );
}

/** The independent oracle: a naive triple loop over dense arrays, fp32 running sum, fp32 result. */
function naive(a: Dense, b: Dense): Dense {
  return a.map((row) => b[0]!.map((_, j) => row.reduce((acc, v, p) => Math.fround(acc + v * b[p]![j]!), 0)));
}

const transpose = (x: Dense): Dense => x[0]!.map((_, j) => x.map((row) => row[j]!));
const identity = (n: number): Dense => Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? 1 : 0)));

/** fp16-representable values: products are exact in double, sums rounded to fp32 per step. */
const half = fc.integer({ min: -2048, max: 2048 }).map((x) => roundTo('fp16', x / 64));
const denseArb = (rows: number, cols: number): fc.Arbitrary<Dense> =>
  fc.array(fc.array(half, { minLength: cols, maxLength: cols }), { minLength: rows, maxLength: rows });
const layoutArb = fc.constantFrom<GemmLayout>('row', 'col');

const problemArb = fc
  .record({
    m: fc.integer({ min: 1, max: 9 }),
    n: fc.integer({ min: 1, max: 9 }),
    k: fc.integer({ min: 1, max: 11 }),
    batch: fc.integer({ min: 1, max: 3 }),
  })
  .chain(({ m, n, k, batch }) =>
    fc.record({
      m: fc.constant(m),
      n: fc.constant(n),
      k: fc.constant(k),
      a: fc.array(denseArb(m, k), { minLength: batch, maxLength: batch }),
      b: fc.array(denseArb(k, n), { minLength: batch, maxLength: batch }),
      la: layoutArb,
      lb: layoutArb,
      lc: layoutArb,
      pads: fc.tuple(
        fc.integer({ min: 0, max: 3 }),
        fc.integer({ min: 0, max: 3 }),
        fc.integer({ min: 0, max: 3 }),
        fc.integer({ min: 0, max: 5 }),
      ),
    }),
  );

describe('referenceGemm (CPU reference, fp32 accumulation)', () => {
  test.prop([problemArb], { numRuns: 60 })(
    'agrees with a naive triple loop on ragged shapes, every layout, padded strides and batches',
    (p) => {
      const batch = p.a.length;
      const [pa, pb, pc, pbatch] = p.pads;
      const a = store(p.a, p.la, pa, pbatch);
      const b = store(p.b, p.lb, pb, pbatch);
      const cStride = (p.lc === 'row' ? p.n : p.m) + pc;
      const cBatch = (p.lc === 'row' ? p.m : p.n) * cStride + pbatch;
      const c = referenceGemm({ m: p.m, n: p.n, k: p.k, batch, a, b, c: { layout: p.lc, stride: cStride, batchStride: cBatch } });
      expect(load(c, p.lc, p.m, p.n, batch, cStride, cBatch)).toEqual(p.a.map((ai, i) => naive(ai, p.b[i]!)));
    },
  );

  test.prop([problemArb], { numRuns: 40 })('identity: A·I = A and I·B = B exactly', (p) => {
    const [a0, b0] = [p.a[0]!, p.b[0]!];
    const ai = referenceGemm({ m: p.m, n: p.k, k: p.k, a: store([a0], p.la, 0, 0), b: store([identity(p.k)], p.lb, 1, 0) });
    expect(load(ai, 'row', p.m, p.k, 1, p.k, 0)).toEqual([a0]);
    const ib = referenceGemm({
      m: p.k,
      n: p.n,
      k: p.k,
      a: store([identity(p.k)], p.la, 0, 0),
      b: store([b0], p.lb, 2, 0),
      c: { layout: 'col' },
    });
    expect(load(ib, 'col', p.k, p.n, 1, p.k, 0)).toEqual([b0]);
  });

  test.prop([problemArb], { numRuns: 40 })(
    'transposes: (A·B)ᵀ = Bᵀ·Aᵀ bit for bit (Bᵀ, Aᵀ are the same data read in the other layout)',
    (p) => {
      const batch = p.a.length;
      const a = store(p.a, p.la, p.pads[0], p.pads[3]);
      const b = store(p.b, p.lb, p.pads[1], p.pads[3]);
      const flip = (x: ReferenceGemmOperand): ReferenceGemmOperand => ({ ...x, layout: x.layout === 'row' ? 'col' : 'row' });
      const ab = referenceGemm({ m: p.m, n: p.n, k: p.k, batch, a, b });
      const btat = referenceGemm({ m: p.n, n: p.m, k: p.k, batch, a: flip(b), b: flip(a) });
      const abT = load(ab, 'row', p.m, p.n, batch, p.n, p.m * p.n).map(transpose);
      expect(load(btat, 'row', p.n, p.m, batch, p.m, p.m * p.n)).toEqual(abT);
      // The result written column-major is the same matrix as Bᵀ·Aᵀ row-major: one buffer, bit for bit.
      expect(Array.from(referenceGemm({ m: p.m, n: p.n, k: p.k, batch, a, b, c: { layout: 'col' } }))).toEqual(Array.from(btat));
    },
  );

  test.prop([problemArb], { numRuns: 40 })('associativity with the identity: (A·I)·B = A·(I·B) = A·B', (p) => {
    const [a0, b0] = [p.a[0]!, p.b[0]!];
    const gemm = (x: Dense, y: Dense): Dense => {
      const c = referenceGemm({ m: x.length, n: y[0]!.length, k: y.length, a: store([x], 'row', 0, 0), b: store([y], 'col', 0, 0) });
      return load(c, 'row', x.length, y[0]!.length, 1, y[0]!.length, 0)[0]!;
    };
    const ab = gemm(a0, b0);
    expect(gemm(gemm(a0, identity(p.k)), b0)).toEqual(ab);
    expect(gemm(a0, gemm(identity(p.k), b0))).toEqual(ab);
  });

  it('fp32 accumulation rounds every step; outType rounds the result through @tilekit/numeric', () => {
    // 1 + 2^-24 + 2^-24: fp32 running sum loses both tiny terms, a double sum keeps them.
    const a = { data: [1, 2 ** -24, 2 ** -24], layout: 'row' as const };
    const b = { data: [1, 1, 1], layout: 'col' as const };
    expect(referenceGemm({ m: 1, n: 1, k: 3, a, b })[0]).toBe(1);
    expect(referenceGemm({ m: 1, n: 1, k: 3, a, b, accType: 'fp64', outType: 'fp32' })[0]).toBe(Math.fround(1 + 2 ** -23));
    expect(
      referenceGemm({ m: 1, n: 1, k: 1, a: { data: [1 / 3], layout: 'row' }, b: { data: [1], layout: 'row' }, outType: 'bf16' })[0],
    ).toBe(roundTo('bf16', 1 / 3));
    expect(
      referenceGemm({
        m: 1,
        n: 1,
        k: 1,
        a: { data: [1 / 3], layout: 'row' },
        b: { data: [3], layout: 'row' },
        inputType: 'fp16',
        accType: 'fp64',
        outType: 'fp32',
      })[0],
    ).toBe(Math.fround(roundTo('fp16', 1 / 3) * 3));
    expect(Array.from(referenceGemm({ m: 2, n: 2, k: 0, a: { data: [], layout: 'row' }, b: { data: [], layout: 'row' } }))).toEqual([
      0, 0, 0, 0,
    ]);
  });

  it('typed errors name the argument and the rule', () => {
    const ok = { data: new Float64Array(4), layout: 'row' as const };
    expect(() => referenceGemm({ m: 0, n: 2, k: 2, a: ok, b: ok })).toThrow(ReferenceGemmError);
    expect(() => referenceGemm({ m: 2, n: 2, k: 2, a: { ...ok, stride: 1 }, b: ok })).toThrow(/a.stride: must be an integer ≥ 2/);
    expect(() => referenceGemm({ m: 2, n: 2, k: 2, batch: 2, a: ok, b: ok })).toThrow(/a.data: must hold at least 8 elements/);
    expect(() => referenceGemm({ m: 2, n: 2, k: 2, a: ok, b: { ...ok, layout: 'diag' as never } })).toThrow(/b.layout/);
    try {
      referenceGemm({ m: 2, n: 2, k: 3, a: ok, b: ok });
    } catch (e) {
      expect((e as ReferenceGemmError).code).toBe('gemm/invalid-reference-arguments');
    }
  });
});
