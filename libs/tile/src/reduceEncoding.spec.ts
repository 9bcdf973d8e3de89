import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { makeVectorLoadEncoding } from './blockEncodings.ts';
import { EncodingBuilderError } from './errors.ts';
import { reduceEncoding } from './reduceEncoding.ts';
import { encodingArb } from './testing/arbitraries.ts';
import { allIndices, bijectionModuloRViolation } from './testing/bruteForce.ts';
import { hRef, rRef, splitMixedRadix, TileDistributionEncoding } from './tileDistributionEncoding.ts';

describe('reduceEncoding', () => {
  it("row reduction over K of CK's 64×64 coalesced load: K0 (lane-owned) becomes R = (1, 8); P1 → (M2, R1); Y → (M0)", () => {
    const enc = new TileDistributionEncoding({
      rs: [1],
      hs: [
        [2, 4, 8],
        [8, 8],
      ],
      ps: [[hRef(0, 1)], [hRef(0, 2), hRef(1, 0)]],
      ys: [hRef(0, 0), hRef(1, 1)],
    });
    const red = reduceEncoding(enc, [1]);
    expect(
      red.encoding.equals(
        new TileDistributionEncoding({ rs: [1, 8], hs: [[2, 4, 8]], ps: [[hRef(0, 1)], [hRef(0, 2), rRef(1)]], ys: [hRef(0, 0)] }),
      ),
    ).toBe(true);
    expect(red.keptXs).toEqual([0]);
    expect(red.keptYs).toEqual([0]);
    expect(red.reducedYs).toEqual([1]);
    expect(red.newRs).toEqual([{ x: 1, minor: 0, length: 8, r: 1, p: 1 }]);
    // Each thread holds 2 partial row sums; the 8 consecutive lanes sharing m2 hold replicas.
    expect(red.encoding.threadBufferSize).toBe(2);
    expect(red.encoding.owners([9]).map((o) => o.ps)).toEqual(Array.from({ length: 8 }, (_, k) => [1, 8 + k]));
    expect(bijectionModuloRViolation(red.encoding)).toBeUndefined();
    // block_tile_reduce_sync's shuffle: R1 sits in P1 (the lane) with derivative 1 (lane deltas 4, 2, 1).
    expect(red.encoding.rDigitPlacement(1)).toEqual({ p: 1, stride: 1 });
    expect(red.encoding.rDigitPlacement(0)).toBeUndefined();
  });

  it('the wave32 version reduces the same way (R = (8) over lanes l..l+7)', () => {
    const red = reduceEncoding(makeVectorLoadEncoding({ rows: 64, cols: 64, vectorLength: 8, warpSize: 32, numWarps: 8 }), [1]);
    expect(red.encoding.toString()).toBe('TileDistributionEncoding R (8) H ((2, 8, 4)); P0 → h0[1]; P1 → h0[2] r[0]; Y → h0[0]');
    expect(bijectionModuloRViolation(red.encoding)).toBeUndefined();
  });

  it('agrees with brute-force recomputation on random encodings and random reduced dims', () => {
    const arb = encodingArb({ xDims: [2, 3] }).chain((enc) =>
      fc
        .subarray(
          enc.hsLengthss.map((_, i) => i),
          { minLength: 1, maxLength: enc.ndimX - 1 },
        )
        .map((xs) => ({ enc, xs })),
    );
    fc.assert(
      fc.property(arb, ({ enc, xs }) => {
        const red = reduceEncoding(enc, xs);
        const out = red.encoding;
        expect(out.ndimX).toBe(enc.ndimX - xs.length);
        for (const ps of allIndices(enc.pLengths))
          for (const ys of allIndices(enc.yLengths)) {
            const x = enc.calculateXIndex(ps, ys);
            expect(
              out.calculateXIndex(
                ps,
                red.keptYs.map((y) => ys[y]!),
              ),
            ).toEqual(red.keptXs.map((k) => x[k]!));
            const newR = red.newRs.map((d) => splitMixedRadix(x[d.x]!, enc.hsLengthss[d.x]!)[d.minor]!);
            expect(out.calculateRIndex(ps)).toEqual([...enc.calculateRIndex(ps), ...newR]);
          }
        // Adding a new R digit's stride to its P moves to the next replica (same X, R digit + 1).
        for (const d of red.newRs) {
          const { p, stride } = out.rDigitPlacement(d.r)!;
          expect(p).toBe(d.p);
          for (const ps of allIndices(out.pLengths)) {
            const r = out.calculateRIndex(ps);
            if (r[d.r]! + 1 >= d.length) continue;
            const next = ps.map((v, k) => (k === p ? v + stride : v));
            expect(out.calculateRIndex(next)).toEqual(r.map((v, k) => (k === d.r ? v + 1 : v)));
            for (const ys of allIndices(out.yLengths)) expect(out.calculateXIndex(next, ys)).toEqual(out.calculateXIndex(ps, ys));
          }
        }
        expect(bijectionModuloRViolation(out)).toBeUndefined();
      }),
      { numRuns: 100 },
    );
  });

  it('rejects bad reduce dims', () => {
    const enc = makeVectorLoadEncoding({ rows: 32, cols: 16, vectorLength: 2, warpSize: 32, numWarps: 1 });
    expect(() => reduceEncoding(enc, [2])).toThrow(EncodingBuilderError);
    expect(() => reduceEncoding(enc, [1, 1])).toThrow(/distinct/);
    expect(() => reduceEncoding(enc, [0, 1])).toThrow(/at least one X dimension must remain/);
  });
});
