import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import {
  makeNaiveTensorDescriptor,
  makeNaiveTensorDescriptorAligned,
  makeNaiveTensorDescriptorPacked,
  padTensorDescriptor,
  TensorDescriptor,
  transformTensorDescriptor,
} from './descriptor.ts';
import { floorDivInt, modInt } from './integerMath.ts';
import { evaluateSymInt, type Bindings } from './symbolic/evaluate.ts';
import { symbol } from './symbolic/symbol.ts';
import { allIndices, bindingsArb, descriptorArb } from './testing/arbitraries.ts';
import { embed, merge, passThrough, pad, unmerge, xor } from './transforms/index.ts';

/**
 * Brute-force check of the vector claims: for every top dim d claiming (V ≥ 2, S) and every index x
 * with x_d ≡ 0 (mod V) and x_d + V ≤ len_d, the V indices x + k·e_d are uniformly valid and, when
 * valid, sit at offset(x) + k·S; with S = 1 the run starts aligned (offset(x) ≡ 0 mod V).
 */
function checkVectorClaims(desc: TensorDescriptor, bindings: Bindings, recipe: string): number {
  const bound = desc.bind(bindings);
  const lengths = bound.lengths;
  const { lengths: V, strides: S } = desc.safeVectorLengthsStrides();
  let checked = 0;
  for (let d = 0; d < lengths.length; d++) {
    const v = V[d]!;
    if (v < 2) continue;
    let seen = 0;
    for (const x of allIndices(lengths)) {
      if (x[d]! % v !== 0 || x[d]! + v > lengths[d]!) continue;
      if (seen++ > 400) break;
      const first = bound.evaluate(x);
      for (let k = 1; k < v; k++) {
        const y = [...x];
        y[d]! += k;
        const e = bound.evaluate(y);
        expect(e.valid, `${recipe}\ndim ${d} claims ${v}×${S[d]} at ${x}`).toBe(first.valid);
        if (first.valid) expect(e.offset, `${recipe}\ndim ${d} claims ${v}×${S[d]} at ${x}`).toBe(first.offset + k * S[d]!);
      }
      if (first.valid && S[d] === 1) expect(modInt(first.offset, v), `${recipe}\nalignment of dim ${d}`).toBe(0);
      checked++;
    }
  }
  return checked;
}

describe('vector length propagation', () => {
  for (const vectorGuarantee of [true, false]) {
    for (const symbolic of [false, true]) {
      test.prop(
        [descriptorArb({ vectorGuarantee, symbolic, maxElements: 1024 }).chain((rd) => bindingsArb(rd.symbols).map((b) => ({ rd, b })))],
        { numRuns: 80 },
      )(
        `never claims more than is safe (brute force; ${vectorGuarantee ? 'strided + guarantee' : 'packed or strided'}, ${symbolic ? 'symbolic' : 'static'})`,
        ({ rd, b }) => {
          checkVectorClaims(rd.descriptor, b, `${rd.recipe}\n${rd.descriptor.toString()}`);
        },
      );
    }
  }

  it('finds the vectors CK finds on the usual layouts', () => {
    const packed = makeNaiveTensorDescriptorPacked([4, 8, 16]);
    expect(packed.safeVectorLengthsStrides()).toEqual({ lengths: [-1, -1, 16], strides: [-1, -1, 1] });
    const hdim = symbol('hdim', { max: 256, multipleOf: 8 });
    const q = makeNaiveTensorDescriptor([symbol('seqlenQ'), hdim], [symbol('strideQ', { multipleOf: 8 }), 1], { vectorLength: 8 });
    expect(q.safeVectorLength(1)).toBe(8);
    expect(padTensorDescriptor(q, [64, 64], [true, true]).safeVectorLength(1)).toBe(8);
    const odd = makeNaiveTensorDescriptor([symbol('seqlenQ'), symbol('hdim')], [symbol('strideQ'), 1], { vectorLength: 8 });
    expect(padTensorDescriptor(odd, [64, 64], [true, true]).safeVectorLength(1)).toBe(1); // padded dim of unknown divisibility: no vectors
    expect(safe(transformTensorDescriptor(makeNaiveTensorDescriptorPacked([4, 8]), [xor([4, 8])], [[0, 1]], [[0, 1]]))).toEqual([-1, -1]);
  });
});

function safe(d: TensorDescriptor): readonly number[] {
  return d.safeVectorLengthsStrides().lengths;
}

describe("golden layouts (CK-tile's GEMM and FMHA layouts)", () => {
  it('GEMM LDS "3d + padding": (kK/8, kM, 8) with strides ((kM+1)·8, 8, 1), viewed as (M, K)', () => {
    const kM = 32;
    const kK = 32;
    const lds0 = makeNaiveTensorDescriptor([kK / 8, kM, 8], [(kM + 1) * 8, 8, 1], { vectorLength: 8, vectorStride: 1 });
    const lds = transformTensorDescriptor(lds0, [passThrough(kM), merge([kK / 8, 8])], [[1], [0, 2]], [[0], [1]]);
    expect(lds.toString()).toBe(
      [
        'TensorDescriptor lengths (32, 32), elementSpaceSize 1048',
        '  embed((4, 32, 8) : (264, 8, 1))  h1 h2 h3 → h0',
        '  passThrough(32)                  h4 → h2',
        '  merge(4, 8)                      h5 → h1 h3',
        '  top h4 h5; bottom h0',
        '  vectors (-, 8×1)',
      ].join('\n'),
    );
    for (const [m, k] of allIndices([kM, kK])) {
      expect(lds.calculateOffset([m!, k!])).toBe(floorDivInt(k!, 8) * (kM + 1) * 8 + m! * 8 + (k! % 8));
    }
    // One 8-element pad per K/8 slab: rows m and m + 1 of one slab are 8 apart, slabs (kM + 1)·8 apart.
    expect(lds.calculateOffset([0, 8]) - lds.calculateOffset([kM - 1, 0])).toBe(16);
  });

  it('FMHA Q view: (seqlenQ, hdim) K-major with strideQ, right-padded to (kM0, kK0) tiles', () => {
    const seqlenQ = symbol('seqlenQ', { max: 1 << 20 });
    const hdim = symbol('hdim', { max: 256, multipleOf: 8 });
    const strideQ = symbol('strideQ', { max: 1 << 16, multipleOf: 8 });
    const q = makeNaiveTensorDescriptor([seqlenQ, hdim], [strideQ, 1], { vectorLength: 8, vectorStride: 1 });
    const qp = padTensorDescriptor(q, [128, 64], [true, true]);
    expect(qp.toString()).toBe(
      [
        'TensorDescriptor lengths (seqlenQ + mod(-seqlenQ, 128), hdim + mod(-hdim, 64)), elementSpaceSize hdim + seqlenQ*strideQ - strideQ',
        '  embed((seqlenQ, hdim) : (strideQ, 1))        h1 h2 → h0',
        '  rightPad(seqlenQ, right mod(-seqlenQ, 128))  h3 → h1',
        '  rightPad(hdim, right mod(-hdim, 64))         h4 → h2',
        '  top h3 h4; bottom h0',
        '  vectors (-, 8×1)',
      ].join('\n'),
    );
    const b = { seqlenQ: 200, hdim: 72, strideQ: 1024 };
    expect(qp.bind(b).lengths).toEqual([256, 128]);
    expect(qp.calculateOffset([199, 71], b)).toBe(199 * 1024 + 71);
    expect(qp.isValidIndex([199, 71], b)).toBe(true);
    expect(qp.isValidIndex([200, 0], b)).toBe(false);
    expect(qp.isValidIndex([0, 72], b)).toBe(false);
    expect(qp.isValidIndex([0, 128], b)).toBe(false); // outside the padded lengths
  });

  it('FMHA K (seqlenK, hdim) with kPad only on hdim, and row-major V re-viewed as (hdimV, seqlenK)', () => {
    const seqlenK = symbol('seqlenK');
    const hdim = symbol('hdim', { max: 256, multipleOf: 8 });
    const k = makeNaiveTensorDescriptor([seqlenK, hdim], [symbol('strideK'), 1], { vectorLength: 8 });
    const kp = padTensorDescriptor(k, [64, 32], [false, true]);
    expect(kp.adaptor.transforms.map(String)).toEqual([
      'embed((seqlenK, hdim) : (strideK, 1))',
      'passThrough(seqlenK)',
      'rightPad(hdim, right mod(-hdim, 32))',
    ]);
    const v = makeNaiveTensorDescriptor([seqlenK, symbol('hdimV')], [symbol('strideV'), 1]);
    const vt = transformTensorDescriptor(v, [passThrough(symbol('hdimV')), passThrough(seqlenK)], [[1], [0]], [[0], [1]]);
    const b = { seqlenK: 100, hdimV: 40, strideV: 48 };
    expect(vt.calculateOffset([3, 7], b)).toBe(7 * 48 + 3);
    expect(vt.lengths.map((l) => evaluateSymInt(l, b))).toEqual([40, 100]);
  });

  it('an xor-swizzled LDS tile (K0, M, K1) stays a bijection onto its element space', () => {
    const base = makeNaiveTensorDescriptorPacked([4, 16, 8]);
    const sw = transformTensorDescriptor(base, [xor([16, 4]), passThrough(8)], [[1, 0], [2]], [[0, 1], [2]]);
    const offsets = new Set<number>();
    for (const [m, k0, k1] of allIndices([16, 4, 8])) {
      const off = sw.calculateOffset([m!, k0!, k1!]);
      expect(off).toBe(((k0! ^ (m! % 4)) * 16 + m!) * 8 + k1!);
      offsets.add(off);
    }
    expect(offsets.size).toBe(512);
    expect(safe(sw)).toEqual([-1, -1, 8]);
  });
});

describe('builders', () => {
  test.prop([fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 4 })])(
    'packed = row-major strides; element space = Π lengths',
    (lengths) => {
      const d = makeNaiveTensorDescriptorPacked(lengths);
      expect(d.elementSpaceSize).toBe(lengths.reduce((a, b) => a * b, 1));
      let expected = 0;
      for (const idx of allIndices(lengths)) expect(d.calculateOffset(idx)).toBe(expected++);
    },
  );

  test.prop([fc.array(fc.tuple(fc.integer({ min: 1, max: 5 }), fc.integer({ min: 0, max: 30 })), { minLength: 1, maxLength: 3 })])(
    'naive: offset = Σ index·stride; element space = 1 + Σ (len − 1)·stride',
    (dims) => {
      const lengths = dims.map(([l]) => l);
      const strides = dims.map(([, s]) => s);
      const d = makeNaiveTensorDescriptor(lengths, strides);
      expect(d.elementSpaceSize).toBe(1 + dims.reduce((a, [l, s]) => a + (l - 1) * s, 0));
      for (const idx of allIndices(lengths)) expect(d.calculateOffset(idx)).toBe(idx.reduce((a, x, i) => a + x * strides[i]!, 0));
    },
  );

  it('aligned: the row stride is rounded up to the alignment', () => {
    const d = makeNaiveTensorDescriptorAligned([3, 5, 6], 8);
    expect(d.adaptor.transforms[0]!.toString()).toBe('embed((3, 5, 6) : (40, 8, 1))');
    expect(d.elementSpaceSize).toBe(1 + 2 * 40 + 4 * 8 + 5);
  });

  it('padding helper pads only the chosen dims to tile multiples', () => {
    const d = padTensorDescriptor(makeNaiveTensorDescriptorPacked([5, 7]), [4, 4], [true, false]);
    expect(d.lengths).toEqual([8, 7]);
    expect(d.isValidIndex([4, 6])).toBe(true);
    expect(d.isValidIndex([5, 0])).toBe(false);
    expect(padTensorDescriptor(makeNaiveTensorDescriptorPacked([8]), [4], [true]).lengths).toEqual([8]);
  });

  it('rejects bad input with typed errors naming the problem', () => {
    expect(() => makeNaiveTensorDescriptor([4, -1], [1, 1])).toThrow(
      expect.objectContaining({ code: 'layout/invalid-length', message: expect.stringContaining('makeNaiveTensorDescriptor lengths[1]') }),
    );
    expect(() => passThrough(-3)).toThrow(
      expect.objectContaining({ code: 'layout/invalid-length', message: expect.stringContaining('-3') }),
    );
    expect(() => merge([2, 0])).toThrow(expect.objectContaining({ code: 'layout/invalid-length' }));
    expect(() => pad(4, -1, 0)).toThrow(
      expect.objectContaining({ code: 'layout/invalid-parameter', message: expect.stringContaining('pad left') }),
    );
    expect(() => makeNaiveTensorDescriptor([4, 4], [1])).toThrow(expect.objectContaining({ code: 'layout/arity-mismatch' }));
    expect(() => embed([4, 4], [1])).toThrow(
      expect.objectContaining({ code: 'layout/arity-mismatch', message: expect.stringContaining('embed coefficients') }),
    );
    const d = makeNaiveTensorDescriptorPacked([4, 6]);
    expect(() => transformTensorDescriptor(d, [merge([4, 6])], [[0]], [[0]])).toThrow(
      expect.objectContaining({ code: 'layout/arity-mismatch' }),
    );
    expect(() => transformTensorDescriptor(d, [passThrough(4), passThrough(4)], [[0], [0]], [[0], [1]])).toThrow(
      expect.objectContaining({ code: 'layout/dim-consumed-twice' }),
    );
    expect(() => transformTensorDescriptor(d, [unmerge([2, 2]), xor([6, 3])], [[0], [1]], [[0, 1], [2]])).toThrow(
      expect.objectContaining({ code: 'layout/xor-not-power-of-two' }),
    );
    expect(() => d.calculateOffset([1, 2, 3])).toThrow(
      expect.objectContaining({ code: 'layout/arity-mismatch', message: expect.stringContaining('tensor index') }),
    );
    expect(() => makeNaiveTensorDescriptor([4], [2], { vectorLength: 4, vectorStride: 1 })).toThrow(
      expect.objectContaining({ code: 'layout/invalid-parameter' }),
    );
  });
});

describe("constructor errors name the caller's argument and the rule", () => {
  const named = (f: () => unknown, code: string, message: string) => expect(f).toThrow(expect.objectContaining({ code, message }));

  it('lengths, strides and vector facts of the public builders', () => {
    named(
      () => makeNaiveTensorDescriptorPacked([-1, 8]),
      'layout/invalid-length',
      'makeNaiveTensorDescriptorPacked lengths[0]: a length must be an integer ≥ 1 (got -1)',
    );
    named(
      () => makeNaiveTensorDescriptorPacked([4, 2.5]),
      'layout/invalid-length',
      'makeNaiveTensorDescriptorPacked lengths[1]: a length must be an integer ≥ 1 (got 2.5)',
    );
    named(
      () => makeNaiveTensorDescriptorPacked([]),
      'layout/arity-mismatch',
      'makeNaiveTensorDescriptorPacked lengths (at least one): expected 1 entries (got 0)',
    );
    named(
      () => makeNaiveTensorDescriptorPacked([4], 0),
      'layout/invalid-parameter',
      'makeNaiveTensorDescriptorPacked vectorLength: must be an integer ≥ 1 (got 0)',
    );
    named(
      () => makeNaiveTensorDescriptor([4, 0], [8, 1]),
      'layout/invalid-length',
      'makeNaiveTensorDescriptor lengths[1]: a length must be an integer ≥ 1 (got 0)',
    );
    named(
      () => makeNaiveTensorDescriptor([4, 8], [-8, 1]),
      'layout/invalid-parameter',
      'makeNaiveTensorDescriptor strides[0]: must be an integer ≥ 0 (got -8)',
    );
    named(
      () => makeNaiveTensorDescriptor([4, 8], [8, 0.5]),
      'layout/invalid-parameter',
      'makeNaiveTensorDescriptor strides[1]: must be an integer ≥ 0 (got 0.5)',
    );
    named(
      () => makeNaiveTensorDescriptor([4, 8], [symbol('s', { min: -4 }), 1]),
      'layout/invalid-parameter',
      'makeNaiveTensorDescriptor strides[0]: must be an integer ≥ 0 (got s)',
    );
    named(
      () => makeNaiveTensorDescriptor([4], [1], { vectorLength: 1.5 }),
      'layout/invalid-parameter',
      'makeNaiveTensorDescriptor vectorLength: must be an integer ≥ 1 (got 1.5)',
    );
    named(
      () => makeNaiveTensorDescriptorAligned([3, -5], 8),
      'layout/invalid-length',
      'makeNaiveTensorDescriptorAligned lengths[1]: a length must be an integer ≥ 1 (got -5)',
    );
    named(
      () => makeNaiveTensorDescriptorAligned([3, 5], 0),
      'layout/invalid-length',
      'makeNaiveTensorDescriptorAligned align: a length must be an integer ≥ 1 (got 0)',
    );
    named(
      () => padTensorDescriptor(makeNaiveTensorDescriptorPacked([5]), [-4], [true]),
      'layout/invalid-length',
      'padTensorDescriptor tileLengths[0]: a length must be an integer ≥ 1 (got -4)',
    );
    // A zero stride (broadcast) is a stride like any other.
    expect(makeNaiveTensorDescriptor([4, 8], [0, 1]).calculateOffset([3, 5])).toBe(5);
  });

  it('the TensorDescriptor constructor names its own parameters', () => {
    const a = makeNaiveTensorDescriptorPacked([4, 8]).adaptor;
    named(
      () => new TensorDescriptor(a, 0),
      'layout/invalid-length',
      'TensorDescriptor elementSpaceSize: a length must be an integer ≥ 1 (got 0)',
    );
    named(
      () => new TensorDescriptor(a, 32, [-1, -1]),
      'layout/arity-mismatch',
      'TensorDescriptor guaranteedVectorLengths (one per hidden dim): expected 3 entries (got 2)',
    );
    named(
      () => new TensorDescriptor(a, 32, [-1, 0, -1]),
      'layout/invalid-parameter',
      'TensorDescriptor guaranteedVectorLengths[1]: must be −1 (unknown) or an integer ≥ 1 (got 0)',
    );
    named(
      () => new TensorDescriptor(a, 32, [-1, -1, 4], [-1, -1, -2]),
      'layout/invalid-parameter',
      'TensorDescriptor guaranteedVectorStrides[2]: must be −1 (unknown) or an integer ≥ 0 (got -2)',
    );
    expect(new TensorDescriptor(a, 32, [32, -1, 8], [1, -1, 1]).safeVectorLength(1)).toBe(8);
  });
});

describe('symbolic descriptors', () => {
  test.prop([descriptorArb({ symbolic: true }).chain((rd) => bindingsArb(rd.symbols).map((b) => ({ rd, b })))], { numRuns: 60 })(
    'the element space bounds every valid offset of a naive base',
    ({ rd, b }) => {
      const base = rd.base.bind(b);
      const space = evaluateSymInt(rd.base.elementSpaceSize, b);
      for (const idx of allIndices(base.lengths)) {
        const off = base.calculateOffset(idx);
        expect(off).toBeGreaterThanOrEqual(0);
        expect(off).toBeLessThan(space);
      }
    },
  );

  it('caches the bound evaluator per bindings object', () => {
    const s = symbol('s');
    const d = makeNaiveTensorDescriptorPacked([s, 4]);
    const b = { s: 3 };
    expect(d.bind(b)).toBe(d.bind(b));
    expect(d.calculateOffset([2, 3], b)).toBe(11);
    expect(() => d.calculateOffset([2, 3])).toThrow(expect.objectContaining({ code: 'layout/unbound-symbol' }));
  });
});
