import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mmaSyncAtoms } from './atoms/mmaSync.ts';
import { EncodingBuilderError } from './errors.ts';
import { permuteEncodingXs } from './permuteEncodingXs.ts';
import { encodingArb } from './testing/arbitraries.ts';
import { allIndices } from './testing/bruteForce.ts';

describe('permuteEncodingXs', () => {
  it('X_out(P, Y)_j = X_in(P, Y)_order[j]; the inverse permutation restores the encoding', () => {
    const arb = encodingArb().chain((enc) =>
      fc
        .shuffledSubarray(
          enc.hsLengthss.map((_, i) => i),
          { minLength: enc.ndimX, maxLength: enc.ndimX },
        )
        .map((order) => ({ enc, order })),
    );
    fc.assert(
      fc.property(arb, ({ enc, order }) => {
        const out = permuteEncodingXs(enc, order);
        for (const ps of allIndices(enc.pLengths))
          for (const ys of allIndices(enc.yLengths)) {
            const x = enc.calculateXIndex(ps, ys);
            expect(out.calculateXIndex(ps, ys)).toEqual(order.map((i) => x[i]!));
          }
        const inverse = order.map((_, j) => order.indexOf(j));
        expect(permuteEncodingXs(out, inverse).equals(enc)).toBe(true);
      }),
      { numRuns: 100 },
    );
  });

  it('views the mma B fragment (K×N) as N×K: lane l holds n = l/4, k = 2(l%4) + i%2 + 8⌊i/2⌋', () => {
    const bt = permuteEncodingXs(mmaSyncAtoms('m16n8k16', 'fp16').b.encoding, [1, 0]);
    for (let lane = 0; lane < 32; lane++)
      for (let i = 0; i < 4; i++) expect(bt.calculateXIndexFromD([lane], i)).toEqual([lane >> 2, 2 * (lane % 4) + (i & 1) + 8 * (i >> 1)]);
    expect(() => permuteEncodingXs(bt, [0, 0])).toThrow(EncodingBuilderError);
    expect(() => permuteEncodingXs(bt, [0])).toThrow(EncodingBuilderError);
  });
});
