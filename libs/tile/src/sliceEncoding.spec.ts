import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mmaSyncAtoms } from './atoms/mmaSync.ts';
import { makeVectorLoadEncoding, makeWarpGridEncoding } from './blockEncodings.ts';
import { embedEncoding } from './embedEncoding.ts';
import { SliceError } from './errors.ts';
import { sliceEncoding } from './sliceEncoding.ts';
import { encodingArb } from './testing/arbitraries.ts';
import { allIndices, bijectionModuloRViolation } from './testing/bruteForce.ts';
import type { TileDistributionEncoding } from './tileDistributionEncoding.ts';

/** Brute force: per thread, the Ys whose element lies in the box; representable iff the same Y box for every thread. */
function bruteForceYBox(
  enc: TileDistributionEncoding,
  b: readonly number[],
  e: readonly number[],
): { origins: number[]; lengths: number[] } | undefined {
  let box: { origins: number[]; lengths: number[] } | undefined;
  for (const ps of allIndices(enc.pLengths)) {
    const inside = [...allIndices(enc.yLengths)].filter((ys) => enc.calculateXIndex(ps, ys).every((x, i) => x >= b[i]! && x < e[i]!));
    if (inside.length === 0) return undefined;
    const origins = enc.yLengths.map((_, y) => Math.min(...inside.map((ys) => ys[y]!)));
    const lengths = enc.yLengths.map((_, y) => Math.max(...inside.map((ys) => ys[y]!)) - origins[y]! + 1);
    if (inside.length !== lengths.reduce((a, c) => a * c, 1)) return undefined;
    if (box === undefined) box = { origins, lengths };
    else if (box.origins.join() !== origins.join() || box.lengths.join() !== lengths.join()) return undefined;
  }
  return box;
}

/** A random box, half the time built digit by digit so that it is representable. */
function boxArb(enc: TileDistributionEncoding): fc.Arbitrary<{ b: number[]; e: number[] }> {
  const perX = enc.hsLengthss.map((h, x) => {
    const n = h.length;
    if (n === 0) return fc.constant([0, 1] as [number, number]);
    const free = fc
      .tuple(fc.nat(enc.xLengths[x]! - 1), fc.nat(enc.xLengths[x]! - 1))
      .map(([u, v]): [number, number] => [Math.min(u, v), Math.max(u, v) + 1]);
    const built = fc
      .tuple(fc.nat(n - 1), fc.array(fc.nat(1_000_000), { minLength: n + 1, maxLength: n + 1 }))
      .map(([m, r]): [number, number] => {
        const suffix = h.map((_, j) => h.slice(j + 1).reduce((a, c) => a * c, 1));
        const l = 1 + (r[n]! % h[m]!);
        let b = 0;
        for (let j = 0; j < m; j++) b += (r[j]! % h[j]!) * suffix[j]!;
        b += (r[m]! % (h[m]! - l + 1)) * suffix[m]!;
        return [b, b + l * suffix[m]!];
      });
    return fc.oneof(free, built);
  });
  return fc.tuple(...perX).map((be) => ({ b: be.map((x) => x[0]), e: be.map((x) => x[1]) }));
}

describe('sliceEncoding', () => {
  it("keeps the Y sub-box of CK's coalesced 64×64 load (wave32): rows 32..63 = the m0 = 1 registers; lane and warp digits cannot be cut", () => {
    const enc = makeVectorLoadEncoding({ rows: 64, cols: 64, vectorLength: 8, warpSize: 32, numWarps: 8 });
    const s = sliceEncoding(enc, [32, 0], [64, 64]);
    expect(s.encoding.toString()).toBe(
      'TileDistributionEncoding R () H ((1, 8, 4), (8, 8)); P0 → h0[1]; P1 → h0[2] h1[0]; Y → h0[0] h1[1]',
    );
    expect(s.yOrigins).toEqual([1, 0]);
    expect(s.yLengths).toEqual([1, 8]);
    expect(() => sliceEncoding(enc, [0, 0], [64, 32])).toThrow(/X1 digit 0 \(length 8\) belongs to P1/); // cols 0..31 cut K0 (lanes)
    expect(() => sliceEncoding(enc, [0, 8], [64, 12])).toThrow(/X1 digit 0 \(length 8\) belongs to P1/); // half a vector: K0 fixed
    expect(() => sliceEncoding(enc, [0, 0], [8, 64])).toThrow(/X0 digit 1 \(length 8\) belongs to P0/); // rows 0..7 cut the warps
    expect(() => sliceEncoding(enc, [2, 0], [6, 64])).toThrow(/must be a box/); // straddles two groups of 4 rows
  });

  it('extracts one (MIter, NIter) sub-tile of a block C tile (2×2 warps ⊗ mma C, repeats 2×4), as block GEMM does', () => {
    const enc = embedEncoding(
      makeWarpGridEncoding({
        warps: [2, 2],
        xs: [
          { warpAxis: 0, repeat: 2 },
          { warpAxis: 1, repeat: 4 },
        ],
      }),
      mmaSyncAtoms('m16n8k16', 'fp16').c.encoding,
    );
    expect(enc.hsLengthss).toEqual([
      [2, 2, 2, 8],
      [4, 2, 4, 2],
    ]);
    const s = sliceEncoding(enc, [32, 16], [64, 32]);
    expect(s.yOrigins).toEqual([1, 1, 0, 0]);
    expect(s.yLengths).toEqual([1, 1, 2, 2]);
    expect(s.encoding.hsLengthss).toEqual([
      [1, 2, 2, 8],
      [1, 2, 4, 2],
    ]);
  });

  it('agrees with brute force: X_out(P, y) + begin = X_in(P, origin + y), and succeeds exactly when a uniform Y box exists', () => {
    const arb = encodingArb({ maxPairs: 1024 }).chain((enc) => boxArb(enc).map((box) => ({ enc, ...box })));
    fc.assert(
      fc.property(arb, ({ enc, b, e }) => {
        const expected = bruteForceYBox(enc, b, e);
        let s: ReturnType<typeof sliceEncoding> | undefined;
        try {
          s = sliceEncoding(enc, b, e);
        } catch (err) {
          if (!(err instanceof SliceError)) throw err;
        }
        if (s === undefined) {
          expect(expected, `${enc.toString()} [${b}] [${e}]`).toBeUndefined();
          return;
        }
        expect(expected, `${enc.toString()} [${b}] [${e}]`).toEqual({ origins: s.yOrigins, lengths: s.yLengths });
        expect(s.encoding.xLengths).toEqual(e.map((x, i) => x - b[i]!));
        for (const ps of allIndices(enc.pLengths))
          for (const ys of allIndices(s.yLengths)) {
            const inner = enc.calculateXIndex(
              ps,
              ys.map((y, k) => y + s.yOrigins[k]!),
            );
            expect(s.encoding.calculateXIndex(ps, ys).map((x, i) => x + b[i]!)).toEqual(inner);
          }
        expect(bijectionModuloRViolation(s.encoding)).toBeUndefined();
      }),
      { numRuns: 200 },
    );
  });
});
