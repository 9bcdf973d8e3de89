import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkTensorIndex } from './checkTensorIndex.ts';
import {
  makeNaiveTensorDescriptor,
  makeNaiveTensorDescriptorPacked,
  padTensorDescriptor,
  transformTensorDescriptor,
} from './descriptor.ts';
import { InvalidTensorIndexError } from './errors.ts';
import { evaluateSymInt } from './symbolic/evaluate.ts';
import { symbol } from './symbolic/symbol.ts';
import { bindingsArb, descriptorArb, type RandomTransformKind } from './testing/arbitraries.ts';
import { merge, passThrough } from './transforms/index.ts';

/** Kinds without a runtime validity check: validity is then exactly "inside the lengths". */
const unpaddedKinds: readonly RandomTransformKind[] = [
  'passThrough',
  'embed',
  'merge',
  'unmerge',
  'freeze',
  'insert',
  'replicate',
  'slice',
  'modulo',
  'xor',
  'offset',
];

/** Mostly in [0, length), sometimes 1 or 2 outside it (about half the 3-d indices are in range). */
const entryArb = (length: number) =>
  fc.oneof({ arbitrary: fc.nat(length - 1), weight: 5 }, { arbitrary: fc.constantFrom(-2, -1, length, length + 1), weight: 1 });

/** A random descriptor, bindings, and an index whose entries may fall up to 2 outside each length. */
const caseArb = (kinds?: readonly RandomTransformKind[]) =>
  fc.boolean().chain((symbolic) =>
    descriptorArb({ symbolic, ...(kinds === undefined ? {} : { kinds }) }).chain((rd) =>
      bindingsArb(rd.symbols).chain((bindings) => {
        const lengths = rd.descriptor.lengths.map((l) => evaluateSymInt(l, bindings));
        return fc.tuple(...lengths.map(entryArb)).map((index) => ({ rd, bindings, lengths, index }));
      }),
    ),
  );

/** What `f` throws (undefined when it returns). */
function thrownBy(f: () => unknown): unknown {
  try {
    f();
  } catch (e) {
    return e;
  }
  return undefined;
}

describe('calculateOffsetChecked', () => {
  it('equals the unchecked offset on valid indices and throws exactly on invalid ones (CK coordinate_has_valid_offset)', () => {
    fc.assert(
      fc.property(caseArb(), ({ rd, bindings, lengths, index }) => {
        const d = rd.descriptor;
        const inRange = index.every((x, i) => x >= 0 && x < lengths[i]!);
        const valid = d.isValidIndex(index, bindings);
        const e = thrownBy(() => d.calculateOffsetChecked(index, bindings));
        if (valid) {
          expect(e, rd.recipe).toBeUndefined();
          expect(d.calculateOffsetChecked(index, bindings)).toBe(d.calculateOffset(index, bindings));
          return;
        }
        expect(e, rd.recipe).toBeInstanceOf(InvalidTensorIndexError);
        const err = e as InvalidTensorIndexError;
        expect(err.code).toBe(inRange ? 'layout/index-in-padding' : 'layout/index-out-of-bounds');
        expect(err.index < 0 || err.index >= err.length, err.message).toBe(true);
        if (!inRange) {
          const dim = index.findIndex((x, i) => x < 0 || x >= lengths[i]!);
          expect(err).toMatchObject({ dim, index: index[dim], length: lengths[dim] });
          expect(err.message).toContain(`tensor index[${dim}]: must be an integer in [0, ${lengths[dim]}) (got ${index[dim]}`);
        }
      }),
    );
  });

  it('without pads, throws exactly when some entry is outside its length', () => {
    fc.assert(
      fc.property(caseArb(unpaddedKinds), ({ rd, bindings, lengths, index }) => {
        const outside = index.some((x, i) => x < 0 || x >= lengths[i]!);
        expect(thrownBy(() => checkTensorIndex(rd.descriptor.bind(bindings).adaptor, index)) !== undefined, rd.recipe).toBe(outside);
      }),
    );
  });

  it('names the dimension, the index and the length; the unchecked path still aliases', () => {
    const d = makeNaiveTensorDescriptor([4, 8], [8, 1]);
    expect(d.calculateOffset([10, 0])).toBe(80);
    expect(() => d.calculateOffsetChecked([10, 0])).toThrow(
      expect.objectContaining({
        code: 'layout/index-out-of-bounds',
        dim: 0,
        index: 10,
        length: 4,
        message: 'tensor index[0]: must be an integer in [0, 4) (got 10 in [10, 0])',
      }),
    );
    expect(() => d.calculateOffsetChecked([0, -1])).toThrow(expect.objectContaining({ dim: 1, index: -1, length: 8 }));
    expect(() => d.calculateOffsetChecked([0.5, 0])).toThrow(expect.objectContaining({ code: 'layout/index-out-of-bounds', dim: 0 }));
    expect(() => d.calculateOffsetChecked([0])).toThrow(expect.objectContaining({ code: 'layout/arity-mismatch' }));
    expect(d.calculateOffsetChecked([3, 7])).toBe(31);
  });

  it('reports an index in the padding with the pad, the top dim and the unpadded index and length', () => {
    const seqlen = symbol('seqlen', { max: 1000 });
    const d = padTensorDescriptor(makeNaiveTensorDescriptor([seqlen, 64], [64, 1]), [128, 64], [true, false]);
    const b = { seqlen: 100 };
    expect(d.calculateOffsetChecked([99, 63], b)).toBe(99 * 64 + 63);
    expect(() => d.calculateOffsetChecked([100, 0], b)).toThrow(
      expect.objectContaining({
        code: 'layout/index-in-padding',
        dim: 0,
        index: 100,
        length: 100,
        message:
          'tensor index [100, 0]: index[0] = 100 lies in the padding of rightPad(seqlen, right mod(-seqlen, 128)) (its unpadded index 100 is outside [0, 100))',
      }),
    );
    expect(() => d.calculateOffsetChecked([128, 0], b)).toThrow(
      expect.objectContaining({ code: 'layout/index-out-of-bounds', length: 128 }),
    );
    // A pad below a merge: the rejected entry is a hidden dim, named as such.
    const merged = transformTensorDescriptor(
      padTensorDescriptor(makeNaiveTensorDescriptorPacked([3, 4]), [4, 4], [true, false]),
      [merge([4, 4])],
      [[0, 1]],
      [[0]],
    );
    expect(merged.isValidIndex([12])).toBe(false);
    expect(() => merged.calculateOffsetChecked([12])).toThrow(
      expect.objectContaining({
        code: 'layout/index-in-padding',
        dim: -1,
        index: 3,
        length: 3,
        message: expect.stringContaining('hidden dim') as unknown as string,
      }),
    );
    expect(
      transformTensorDescriptor(makeNaiveTensorDescriptorPacked([3]), [passThrough(3)], [[0]], [[0]]).calculateOffsetChecked([2]),
    ).toBe(2);
  });
});
