import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mfmaAtoms } from './atoms/mfma.ts';
import { mmaSyncAtoms } from './atoms/mmaSync.ts';
import { wgmmaAccumulatorAtom } from './atoms/wgmma.ts';
import { makeVectorLoadEncoding, makeWarpGridEncoding } from './blockEncodings.ts';
import { embedEncoding } from './embedEncoding.ts';
import { EncodingBuilderError } from './errors.ts';
import { encodingArb } from './testing/arbitraries.ts';
import { allIndices, bijectionModuloRViolation } from './testing/bruteForce.ts';
import { hRef, rRef, TileDistributionEncoding } from './tileDistributionEncoding.ts';

describe('embedEncoding (outer ⊗ inner)', () => {
  it('agrees with brute-force recomputation: X = X_outer·|X_inner| + X_inner, R = R_outer ++ R_inner', () => {
    const pair = fc
      .integer({ min: 1, max: 3 })
      .chain((n) => fc.tuple(encodingArb({ xDims: [n, n], maxPairs: 48 }), encodingArb({ xDims: [n, n], maxPairs: 48 })));
    fc.assert(
      fc.property(pair, ([outer, inner]) => {
        const enc = embedEncoding(outer, inner);
        expect(enc.xLengths).toEqual(outer.xLengths.map((l, i) => l * inner.xLengths[i]!));
        for (const po of allIndices(outer.pLengths))
          for (const pi of allIndices(inner.pLengths)) {
            const ps = [...po, ...pi];
            expect(enc.calculateRIndex(ps)).toEqual([...outer.calculateRIndex(po), ...inner.calculateRIndex(pi)]);
            for (const yo of allIndices(outer.yLengths))
              for (const yi of allIndices(inner.yLengths)) {
                const xo = outer.calculateXIndex(po, yo);
                const xi = inner.calculateXIndex(pi, yi);
                expect(enc.calculateXIndex(ps, [...yo, ...yi])).toEqual(xo.map((x, k) => x * inner.xLengths[k]! + xi[k]!));
              }
          }
        expect(bijectionModuloRViolation(enc)).toBeUndefined();
      }),
      { numRuns: 80 },
    );
  });

  it('rejects encodings of different X rank', () => {
    const a = new TileDistributionEncoding({ hs: [[2]], ps: [[hRef(0, 0)]], ys: [] });
    const b = new TileDistributionEncoding({ hs: [[2], [2]], ps: [[hRef(0, 0)]], ys: [hRef(1, 0)] });
    expect(() => embedEncoding(a, b)).toThrow(EncodingBuilderError);
  });

  it('block C tile = 2×2 warps (2 repeats along M) ⊗ mma.m16n8k16 C: golden formula', () => {
    const outer = makeWarpGridEncoding({ warps: [2, 2], xs: [{ warpAxis: 0, repeat: 2 }, { warpAxis: 1 }] });
    expect(outer.toString()).toBe('TileDistributionEncoding R () H ((2, 2), (1, 2)); P0 → h0[1] h1[1]; Y → h0[0] h1[0]');
    const enc = embedEncoding(outer, mmaSyncAtoms('m16n8k16', 'fp16').c.encoding);
    expect(enc.xLengths).toEqual([64, 16]);
    expect(enc.pLengths).toEqual([4, 32]);
    for (let w = 0; w < 4; w++)
      for (let lane = 0; lane < 32; lane++)
        for (let d = 0; d < 8; d++) {
          const [rep, mhi, j] = [Math.floor(d / 4), Math.floor(d / 2) % 2, d % 2];
          const [wm, wn] = [Math.floor(w / 2), w % 2];
          const row = 32 * rep + 16 * wm + 8 * mhi + Math.floor(lane / 4);
          const col = 8 * wn + 2 * (lane % 4) + j;
          expect(enc.calculateXIndexFromD([w, lane], d)).toEqual([row, col]);
        }
    expect(bijectionModuloRViolation(enc)).toBeUndefined();
  });

  it('CK block-GEMM operand grids: A replicated over N warps, B over M warps', () => {
    const a = makeWarpGridEncoding({ warps: [2, 4], xs: [{ warpAxis: 0, repeat: 3 }, { repeat: 2 }] });
    // CK: R = (NWarp), H = ((MIter, MWarp), (KIter)), P0 → (H_M[1], R[0]), Y → (H_M[0], H_K[0]).
    expect(
      a.equals(new TileDistributionEncoding({ rs: [4], hs: [[3, 2], [2]], ps: [[hRef(0, 1), rRef(0)]], ys: [hRef(0, 0), hRef(1, 0)] })),
    ).toBe(true);
    const b = makeWarpGridEncoding({ warps: [2, 4], xs: [{ repeat: 2 }, { warpAxis: 1 }] });
    expect(
      b.equals(new TileDistributionEncoding({ rs: [2], hs: [[2], [1, 4]], ps: [[rRef(0), hRef(1, 1)]], ys: [hRef(0, 0), hRef(1, 0)] })),
    ).toBe(true);
    expect(() => makeWarpGridEncoding({ warps: [2], xs: [{ warpAxis: 0 }, { warpAxis: 0 }] })).toThrow(/may split only one X/);
    expect(() => makeWarpGridEncoding({ warps: [2], xs: [{ warpAxis: 1 }] })).toThrow(EncodingBuilderError);
  });

  it('exhaustive bijection modulo R for block distributions built by embed (shapes, warp counts, vector widths)', () => {
    const mma = mmaSyncAtoms('m16n8k16', 'bf16');
    const mma8 = mmaSyncAtoms('m16n8k32', 'int8');
    const mfma = mfmaAtoms('32x32x8', 'fp16');
    const cases: [string, TileDistributionEncoding][] = [
      ['vector load 64×64 v8, 8 warps of 32', makeVectorLoadEncoding({ rows: 64, cols: 64, vectorLength: 8, warpSize: 32, numWarps: 8 })],
      ['vector load 128×32 v8, 4 warps of 32', makeVectorLoadEncoding({ rows: 128, cols: 32, vectorLength: 8, warpSize: 32, numWarps: 4 })],
      ['vector load 16×128 v4, 2 warps of 32', makeVectorLoadEncoding({ rows: 16, cols: 128, vectorLength: 4, warpSize: 32, numWarps: 2 })],
      ['vector load 32×16 v2, 1 warp of 32', makeVectorLoadEncoding({ rows: 32, cols: 16, vectorLength: 2, warpSize: 32, numWarps: 1 })],
      ['vector load 64×64 v8, 4 waves of 64', makeVectorLoadEncoding({ rows: 64, cols: 64, vectorLength: 8, warpSize: 64, numWarps: 4 })],
      [
        'mma C, 2×2 warps, 2×4 repeats',
        embedEncoding(
          makeWarpGridEncoding({
            warps: [2, 2],
            xs: [
              { warpAxis: 0, repeat: 2 },
              { warpAxis: 1, repeat: 4 },
            ],
          }),
          mma.c.encoding,
        ),
      ],
      [
        'mma A, 4×2 warps, K repeat 2 (replicas over the 2 N warps)',
        embedEncoding(makeWarpGridEncoding({ warps: [4, 2], xs: [{ warpAxis: 0 }, { repeat: 2 }] }), mma.a.encoding),
      ],
      [
        'mma B (K×N), 2×2 warps',
        embedEncoding(makeWarpGridEncoding({ warps: [2, 2], xs: [{ repeat: 2 }, { warpAxis: 1, repeat: 2 }] }), mma.b.encoding),
      ],
      [
        'int8 mma A, 1×4 warps',
        embedEncoding(makeWarpGridEncoding({ warps: [1, 4], xs: [{ warpAxis: 0, repeat: 2 }, { repeat: 1 }] }), mma8.a.encoding),
      ],
      [
        'MFMA 32×32 C, 2×2 waves',
        embedEncoding(makeWarpGridEncoding({ warps: [2, 2], xs: [{ warpAxis: 0 }, { warpAxis: 1 }] }), mfma.c.encoding),
      ],
      [
        'wgmma m64n32 D, 2 warpgroups along M',
        embedEncoding(makeWarpGridEncoding({ warps: [2], xs: [{ warpAxis: 0 }, {}] }), wgmmaAccumulatorAtom({ n: 32 }).encoding),
      ],
    ];
    for (const [name, enc] of cases) expect(bijectionModuloRViolation(enc), name).toBeUndefined();
  });

  it('makeVectorLoadEncoding checks that the shape divides', () => {
    expect(() => makeVectorLoadEncoding({ rows: 64, cols: 60, vectorLength: 8, warpSize: 32, numWarps: 4 })).toThrow(
      /multiple of vectorLength/,
    );
    expect(() => makeVectorLoadEncoding({ rows: 64, cols: 24, vectorLength: 8, warpSize: 32, numWarps: 4 })).toThrow(
      /warpSize must be a multiple/,
    );
    expect(() => makeVectorLoadEncoding({ rows: 8, cols: 64, vectorLength: 8, warpSize: 32, numWarps: 4 })).toThrow(
      /rows must be a multiple/,
    );
    expect(() => makeVectorLoadEncoding({ rows: 8, cols: 64, vectorLength: 0, warpSize: 32, numWarps: 4 })).toThrow(/integer ≥ 1/);
  });
});
