import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { evaluateSymInt } from '../symbolic/evaluate.ts';
import { symbol } from '../symbolic/symbol.ts';
import { allIndices, indexArb, transformCaseArb } from '../testing/arbitraries.ts';
import {
  embed,
  freeze,
  insert,
  leftPad,
  merge,
  modulo,
  offset,
  pad,
  passThrough,
  replicate,
  rightPad,
  slice,
  unmerge,
  xor,
} from './index.ts';

const lengthsArb = fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 4 });
const product = (xs: readonly number[]): number => xs.reduce((a, b) => a * b, 1);

describe('every transform', () => {
  test.prop([transformCaseArb()])('calculateLowerIndex agrees with the symbolic lower index', ({ transform, up }) => {
    const numeric = transform.calculateLowerIndex(up);
    const symbolic = transform.lowerSymbolic(up).map((x) => evaluateSymInt(x));
    expect(numeric).toEqual(symbolic);
  });

  test.prop([transformCaseArb()])(
    'updateLowerIndex from the new upper index = recomputing (steps of any sign)',
    ({ transform, up, step }) => {
      const upNew = up.map((u, i) => u + step[i]!);
      const lowOld = transform.calculateLowerIndex(up);
      const lowNew = transform.calculateLowerIndex(upNew);
      const r = transform.updateLowerIndex(step, upNew, lowOld);
      expect(r.lowNew).toEqual(lowNew);
      expect(r.dLow).toEqual(lowNew.map((l, i) => l - lowOld[i]!));
    },
  );

  test.prop([transformCaseArb()])('always-valid transforms accept every in-range upper index and land in range', ({ transform, up }) => {
    // Unchecked pads are always valid by the caller's promise (the padding is never accessed), not by construction.
    if (!transform.isAlwaysValid || ['pad', 'leftPad', 'rightPad'].includes(transform.kind)) return;
    expect(transform.isValidUpperIndex(up)).toBe(true);
    const low = transform.calculateLowerIndex(up);
    transform.lowerLengths.forEach((l, i) => {
      if (typeof l === 'number') {
        expect(low[i]).toBeGreaterThanOrEqual(0);
        expect(low[i]).toBeLessThan(l);
      }
    });
  });

  test.prop([transformCaseArb(['passThrough', 'embed', 'unmerge', 'pad', 'leftPad', 'rightPad', 'slice', 'offset', 'freeze'])])(
    'linear transforms propagate the delta: lower(u + d) − lower(u) depends on d only',
    ({ transform, up, step }) => {
      expect(transform.isLinear).toBe(true);
      const a = transform.calculateLowerIndex(up);
      const b = transform.calculateLowerIndex(up.map((u, i) => u + step[i]!));
      const zero = transform.calculateLowerIndex(up.map(() => 0));
      const d = transform.calculateLowerIndex(step);
      expect(b.map((x, i) => x - a[i]!)).toEqual(d.map((x, i) => x - zero[i]!));
    },
  );
});

describe('merge and unmerge', () => {
  test.prop([lengthsArb.chain((l) => fc.tuple(fc.constant(l), indexArb(l)))])(
    'merge ∘ unmerge is the identity on in-range indices',
    ([lengths, idx]) => {
      const [flat] = unmerge(lengths).calculateLowerIndex(idx) as [number];
      expect(merge(lengths).calculateLowerIndex([flat])).toEqual(idx);
    },
  );

  test.prop([lengthsArb.chain((l) => fc.tuple(fc.constant(l), fc.nat(product(l) - 1)))])(
    'unmerge ∘ merge is the identity on [0, Π lengths)',
    ([lengths, u]) => {
      const digits = merge(lengths).calculateLowerIndex([u]);
      expect(unmerge(lengths).calculateLowerIndex(digits)).toEqual([u]);
    },
  );

  it('digit order is row-major, last fastest; the first digit is not wrapped', () => {
    expect(merge([2, 3, 4]).calculateLowerIndex([23])).toEqual([1, 2, 3]);
    expect(merge([2, 3, 4]).calculateLowerIndex([24])).toEqual([2, 0, 0]);
    expect(unmerge([2, 3, 4]).calculateLowerIndex([1, 2, 3])).toEqual([23]);
    expect(unmerge([2, 3, 4]).strides).toEqual([12, 4, 1]);
  });
});

describe('embed, pads, slice, offset, modulo, freeze, insert, replicate', () => {
  test.prop([
    fc
      .integer({ min: 1, max: 4 })
      .chain((n) =>
        fc.tuple(
          fc.array(fc.integer({ min: 1, max: 6 }), { minLength: n, maxLength: n }),
          fc.array(fc.integer({ min: -9, max: 40 }), { minLength: n, maxLength: n }),
        ),
      )
      .chain(([l, c]) => fc.tuple(fc.constant(l), fc.constant(c), indexArb(l))),
  ])('embed is the stride dot product', ([lengths, coefficients, idx]) => {
    expect(embed(lengths, coefficients).calculateLowerIndex(idx)).toEqual([idx.reduce((acc, x, i) => acc + x * coefficients[i]!, 0)]);
  });

  test.prop([fc.integer({ min: 1, max: 8 }), fc.nat(4), fc.nat(4)])('pad validity is exactly "lower index in [0, L)"', (L, lp, rp) => {
    const t = pad(L, lp, rp);
    const lt = leftPad(L, lp);
    const rt = rightPad(L, rp);
    for (let u = 0; u < L + lp + rp; u++) {
      const [low] = t.calculateLowerIndex([u]) as [number];
      expect(low).toBe(u - lp);
      expect(t.isValidUpperIndex([u])).toBe(low >= 0 && low < L);
    }
    for (let u = 0; u < L + lp; u++) expect(lt.isValidUpperIndex([u])).toBe(u - lp >= 0);
    for (let u = 0; u < L + rp; u++) expect(rt.isValidUpperIndex([u])).toBe(u < L);
    expect(pad(L, lp, rp, true).isValidUpperIndex([0])).toBe(true);
    expect(t.isAlwaysValid).toBe(false);
  });

  test.prop([fc.integer({ min: 1, max: 20 }), fc.nat(19), fc.nat(30)])('slice and offset shift the index', (L, b0, off) => {
    const b = b0 % L;
    const s = slice(L, b, L);
    expect(s.upperLengths).toEqual([L - b]);
    for (let u = 0; u < L - b; u++) expect(s.calculateLowerIndex([u])).toEqual([u + b]);
    for (let u = 0; u < L; u++) expect(offset(L, off).calculateLowerIndex([u])).toEqual([u + off]);
  });

  test.prop([fc.integer({ min: 1, max: 9 }), fc.integer({ min: 1, max: 40 })])('modulo wraps', (m, n) => {
    for (let u = 0; u < n; u++) expect(modulo(m, n).calculateLowerIndex([u])).toEqual([u % m]);
  });

  it('freeze, insert and replicate have the documented arities', () => {
    expect(freeze(3).calculateLowerIndex([])).toEqual([3]);
    expect(insert(4).calculateLowerIndex([2])).toEqual([]);
    expect(replicate([2, 3]).calculateLowerIndex([1, 2])).toEqual([]);
    expect([freeze(3).upperArity, insert(4).lowerArity, replicate([2, 3]).upperArity]).toEqual([0, 0, 2]);
  });
});

describe('xor', () => {
  test.prop([fc.integer({ min: 1, max: 12 }), fc.constantFrom(1, 2, 4, 8, 16)])(
    'is a bijection of the box and an involution',
    (len0, len1) => {
      const t = xor([len0, len1]);
      const seen = new Set<number>();
      for (const [a, b] of allIndices([len0, len1])) {
        const low = t.calculateLowerIndex([a!, b!]);
        expect(low[0]).toBe(a);
        expect(low[1]).toBeGreaterThanOrEqual(0);
        expect(low[1]).toBeLessThan(len1);
        seen.add(low[0]! * len1 + low[1]!);
        expect(t.calculateLowerIndex(low)).toEqual([a, b]);
      }
      expect(seen.size).toBe(len0 * len1);
    },
  );

  it('rejects lengths that are not static powers of two', () => {
    expect(() => xor([4, 6])).toThrow(expect.objectContaining({ code: 'layout/xor-not-power-of-two' }));
    expect(() => xor([4, symbol('n')])).toThrow(
      expect.objectContaining({ code: 'layout/xor-not-power-of-two', message: expect.stringContaining('n') }),
    );
    expect(() => xor([4])).toThrow(expect.objectContaining({ code: 'layout/arity-mismatch' }));
  });
});

describe('symbolic parameters', () => {
  const s = symbol('s', { min: 1, max: 9 });
  const w = symbol('w', { min: 2, max: 8, multipleOf: 2 });

  test.prop([fc.integer({ min: 1, max: 9 }), fc.integer({ min: 1, max: 4 }).map((x) => 2 * x)])(
    'bind under bindings and agree with the static transform',
    (sv, wv) => {
      const b = { s: sv, w: wv };
      const pairs = [
        [merge([s, w, 3]), merge([sv, wv, 3])],
        [unmerge([w, s]), unmerge([wv, sv])],
        [pad(s, w, 1), pad(sv, wv, 1)],
        [embed([s, w], [w, 1]), embed([sv, wv], [wv, 1])],
        [modulo(w, s), modulo(wv, sv)],
        [offset(s, w), offset(sv, wv)],
      ] as const;
      for (const [sym, num] of pairs) {
        const lens = sym.upperLengths.map((l) => evaluateSymInt(l, b));
        expect(lens).toEqual(num.upperLengths);
        for (const idx of allIndices(lens)) {
          expect(sym.calculateLowerIndex(idx, b)).toEqual(num.calculateLowerIndex(idx));
          expect(sym.isValidUpperIndex(idx, b)).toBe(num.isValidUpperIndex(idx));
        }
      }
    },
  );

  it('print readably', () => {
    expect(merge([s, 4]).toString()).toBe('merge(s, 4)');
    expect(merge([s, 4]).upperLengths.map(String)).toEqual(['4*s']);
    expect(pad(s, 1, 2).toString()).toBe('pad(s, left 1, right 2)');
    expect(embed([s, 8], [w, 1]).toString()).toBe('embed((s, 8) : (w, 1))');
    expect(slice(10, 2, 7).toString()).toBe('slice(10, [2, 7))');
    expect(xor([8, 4]).toString()).toBe('xor(8, 4)');
    expect(passThrough(s).toString()).toBe('passThrough(s)');
  });

  it('reject bindings outside the domain and unbound symbols', () => {
    expect(() => merge([s, 4]).calculateLowerIndex([3], { s: 10 })).toThrow(
      expect.objectContaining({ code: 'layout/binding-out-of-domain' }),
    );
    expect(() => merge([s, 4]).calculateLowerIndex([3])).toThrow(expect.objectContaining({ code: 'layout/unbound-symbol' }));
  });
});
