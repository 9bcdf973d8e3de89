import fc from 'fast-check';
import { ArgumentError } from '@tilekit/numeric';
import { describe, expect, it } from 'vitest';
import { checkPermutation, checkShape, inversePermutation, ravelIndex, rowMajorStrides, shapeSize, unravelIndex } from './shape.ts';
import { permutationArb, shapeArb } from './testing/index.ts';

describe('shape helpers', () => {
  it('golden: sizes and row-major strides', () => {
    expect(shapeSize([])).toBe(1);
    expect(shapeSize([2, 0, 3])).toBe(0);
    expect(rowMajorStrides([2, 3, 4])).toEqual([12, 4, 1]);
    expect(rowMajorStrides([])).toEqual([]);
    expect(unravelIndex(23, [2, 3, 4])).toEqual([1, 2, 3]);
    expect(ravelIndex([1, 0, 2], [2, 3, 4])).toBe(14);
  });

  it('ravelIndex ∘ unravelIndex = identity, and ravel = Σ index·rowMajorStrides', () => {
    fc.assert(
      fc.property(
        shapeArb({ minRank: 1 }).chain((s) => fc.tuple(fc.constant(s), fc.nat({ max: shapeSize(s) - 1 }))),
        ([shape, flat]) => {
          const index = unravelIndex(flat, shape);
          expect(ravelIndex(index, shape)).toBe(flat);
          const strides = rowMajorStrides(shape);
          expect(index.reduce((sum, i, axis) => sum + i * strides[axis]!, 0)).toBe(flat);
        },
      ),
    );
  });

  it('inversePermutation inverts', () => {
    fc.assert(
      fc.property(
        fc.nat({ max: 6 }).chain((rank) => permutationArb(rank)),
        (p) => {
          const inv = inversePermutation(p);
          p.forEach((a, i) => expect(inv[a]).toBe(i));
          expect(inversePermutation(inv)).toEqual(p);
        },
      ),
    );
  });

  it('errors name the function, the argument and what was found', () => {
    expect(() => checkShape([2, -1], 'HostTensor.empty')).toThrow(
      'HostTensor.empty: shape must be an array of non-negative integers (got [2,-1])',
    );
    expect(() => checkShape([1.5])).toThrow(ArgumentError);
    expect(() => checkShape([2 ** 30, 2 ** 30])).toThrow('shape must have at most 2^53 - 1 elements');
    expect(() => unravelIndex(6, [2, 3])).toThrow('unravelIndex: flat index must be an integer in [0, 6) (got 6)');
    expect(() => ravelIndex([0, 3], [2, 3])).toThrow('ravelIndex: index entry 1 must be an integer in [0, 3) for shape [2,3] (got [0,3])');
    expect(() => ravelIndex([0], [2, 3])).toThrow('ravelIndex: index must have 2 entries for shape [2,3] (got [0])');
    expect(() => checkPermutation([0, 0, 1, 2], 4, 'permute')).toThrow('permute: axes must be a permutation of 0..3 (got [0,0,1,2])');
    expect(() => checkPermutation([0], 0, 'permute')).toThrow('permute: axes must be [] for a rank-0 tensor (got [0])');
  });
});
