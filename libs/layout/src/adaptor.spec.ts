import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { chainTensorAdaptors, makeSingleStageTensorAdaptor, TensorAdaptor, transformTensorAdaptor } from './adaptor.ts';
import { evaluateSymInt } from './symbolic/evaluate.ts';
import { allIndices, bindingsArb, descriptorArb } from './testing/arbitraries.ts';
import { embed, merge, passThrough, unmerge } from './transforms/index.ts';

const stagedArb = descriptorArb({ levels: [2, 3] }).filter((rd) => rd.stages.length >= 2);

describe('tensor adaptors', () => {
  test.prop([stagedArb.chain((rd) => bindingsArb(rd.symbols).map((b) => ({ rd, b })))], { numRuns: 60 })(
    'transform = chain with a single stage, and chaining is associative, as functions',
    ({ rd, b }) => {
      const base = rd.base.adaptor;
      const [s1, s2] = rd.stages as [(typeof rd.stages)[0], (typeof rd.stages)[0]];
      const a1 = makeSingleStageTensorAdaptor(s1.transforms, s1.lowerDimIds, s1.upperDimIds);
      const a2 = makeSingleStageTensorAdaptor(s2.transforms, s2.lowerDimIds, s2.upperDimIds);
      const viaTransform = transformTensorAdaptor(
        transformTensorAdaptor(base, s1.transforms, s1.lowerDimIds, s1.upperDimIds),
        s2.transforms,
        s2.lowerDimIds,
        s2.upperDimIds,
      );
      const left = chainTensorAdaptors(chainTensorAdaptors(base, a1), a2);
      const right = chainTensorAdaptors(base, chainTensorAdaptors(a1, a2));
      const lengths = viaTransform.topLengths.map((l) => evaluateSymInt(l, b));
      expect(left.topLengths.map((l) => evaluateSymInt(l, b))).toEqual(lengths);
      expect(right.topLengths.map((l) => evaluateSymInt(l, b))).toEqual(lengths);
      let n = 0;
      for (const top of allIndices(lengths)) {
        if (n++ > 300) break;
        const expected = viaTransform.calculateBottomIndex(top, b);
        expect(left.calculateBottomIndex(top, b)).toEqual(expected);
        expect(right.calculateBottomIndex(top, b)).toEqual(expected);
        // Composition of functions: the base applied to what the stages produce.
        const mid = chainTensorAdaptors(a1, a2).calculateBottomIndex(top, b);
        expect(base.calculateBottomIndex(mid, b)).toEqual(expected);
      }
    },
  );

  it('numbers hidden dims as CK does and prints the graph', () => {
    const a = makeSingleStageTensorAdaptor([merge([2, 3]), passThrough(4)], [[0, 1], [2]], [[1], [0]]);
    expect(a.bottomDimHiddenIds).toEqual([0, 1, 2]);
    expect(a.topDimHiddenIds).toEqual([3, 4]);
    expect(a.upperDimHiddenIds).toEqual([[4], [3]]);
    expect(a.topLengths).toEqual([4, 6]);
    expect(a.calculateBottomIndex([3, 5])).toEqual([1, 2, 3]);
    const b = transformTensorAdaptor(a, [unmerge([2, 2]), passThrough(6)], [[0], [1]], [[0, 2], [1]]);
    expect(b.topDimHiddenIds).toEqual([5, 7, 6]);
    expect(b.toString()).toBe(
      [
        'TensorAdaptor lengths (2, 6, 2)',
        '  merge(2, 3)     h4 → h0 h1',
        '  passThrough(4)  h3 → h2',
        '  unmerge(2, 2)   h5 h6 → h3',
        '  passThrough(6)  h7 → h4',
        '  top h5 h7 h6; bottom h0 h1 h2',
      ].join('\n'),
    );
  });

  it('rejects malformed graphs with typed errors', () => {
    expect(() => new TensorAdaptor([passThrough(2), passThrough(2)], [[0], [0]], [[1], [2]], [0], [1, 2])).toThrow(
      expect.objectContaining({ code: 'layout/invalid-hidden-graph' }),
    );
    expect(() => new TensorAdaptor([passThrough(2), passThrough(2)], [[0], [1]], [[2], [2]], [0, 1], [2])).toThrow(
      expect.objectContaining({ code: 'layout/dim-consumed-twice' }),
    );
    expect(() => new TensorAdaptor([passThrough(2), passThrough(2)], [[2], [0]], [[1], [2]], [0], [1])).toThrow(
      expect.objectContaining({ code: 'layout/invalid-hidden-graph', message: expect.stringContaining('before') }),
    );
    expect(() => new TensorAdaptor([embed([2, 2], [1, 2])], [[0]], [[1]], [0], [1])).toThrow(
      expect.objectContaining({ code: 'layout/arity-mismatch' }),
    );
    const a = makeSingleStageTensorAdaptor([passThrough(2), passThrough(3)], [[0], [1]], [[0], [1]]);
    expect(() => transformTensorAdaptor(a, [merge([2, 3])], [[0, 0]], [[0]])).toThrow(
      expect.objectContaining({ code: 'layout/dim-consumed-twice', message: expect.stringContaining('top dimension 0') }),
    );
    expect(() => transformTensorAdaptor(a, [passThrough(2)], [[0]], [[0]])).toThrow(
      expect.objectContaining({ code: 'layout/dim-not-consumed' }),
    );
    expect(() => transformTensorAdaptor(a, [passThrough(2), passThrough(3)], [[0], [1]], [[1], [1]])).toThrow(
      expect.objectContaining({ code: 'layout/top-dims-not-permutation' }),
    );
    expect(() => transformTensorAdaptor(a, [passThrough(5), passThrough(3)], [[0], [1]], [[0], [1]])).toThrow(
      expect.objectContaining({ code: 'layout/length-mismatch' }),
    );
    expect(() => chainTensorAdaptors(a, makeSingleStageTensorAdaptor([passThrough(2)], [[0]], [[0]]))).toThrow(
      expect.objectContaining({ code: 'layout/arity-mismatch' }),
    );
    expect(() => a.calculateBottomIndex([1])).toThrow(
      expect.objectContaining({ code: 'layout/arity-mismatch', message: expect.stringContaining('top index') }),
    );
  });

  test.prop([fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 1, maxLength: 3 })])(
    'a stage of pass-throughs is the identity',
    (lengths) => {
      const ids = lengths.map((_, i) => [i]);
      const a = makeSingleStageTensorAdaptor(
        lengths.map((l) => passThrough(l)),
        ids,
        ids,
      );
      for (const top of allIndices(lengths)) expect(a.calculateBottomIndex(top)).toEqual(top);
    },
  );
});
