import { composeTensorAdaptor, evaluateSymInt, sym } from '@tilekit/layout';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { makeVectorLoadEncoding } from './blockEncodings.ts';
import { EncodingError, TileArityError, TileIndexRangeError } from './errors.ts';
import { encodingArb } from './testing/arbitraries.ts';
import { allIndices, bijectionModuloRViolation, referenceRIndex, referenceXIndex } from './testing/bruteForce.ts';
import { hRef, rRef, TileDistributionEncoding, type TileDistributionEncodingSpec } from './tileDistributionEncoding.ts';

/** CK-tile's `MakeADramTileDistribution` for a 64×64 fp16 tile, 256 threads, wave64: R = (1), H_M = (2, 4, 8), H_K = (8, 8). */
const digestWave64: TileDistributionEncodingSpec = {
  rs: [1],
  hs: [
    [2, 4, 8],
    [8, 8],
  ],
  ps: [[hRef(0, 1)], [hRef(0, 2), hRef(1, 0)]],
  ys: [hRef(0, 0), hRef(1, 1)],
};

/** Thread t's (row, col) pairs of that example: rows m0 = 0, 1; cols k1 = 0..7 (d = 8·m0 + k1). */
function threadCells(enc: TileDistributionEncoding, t: number, warpSize: number): { rows: number[]; cols: number[] } {
  const ps = [Math.floor(t / warpSize), t % warpSize];
  const cells = Array.from({ length: 16 }, (_, d) => enc.calculateXIndexFromD(ps, d));
  return { rows: [...new Set(cells.map((c) => c[0]!))], cols: [...new Set(cells.map((c) => c[1]!))] };
}

const range = (a: number, b: number): number[] => Array.from({ length: b - a }, (_, i) => a + i);

describe("CK-tile's coalesced A-tile load as a worked example (64×64 fp16, 256 threads, 8-element vectors)", () => {
  it('wave64, as CK writes it: m = 32·m0 + 8·w + ⌊l/8⌋, k = 8·(l mod 8) + k1, d = 8·m0 + k1', () => {
    const enc = new TileDistributionEncoding(digestWave64);
    expect(enc.pLengths).toEqual([4, 64]);
    expect(enc.yLengths).toEqual([2, 8]);
    expect(enc.threadBufferSize).toBe(16);
    for (let t = 0; t < 256; t++) {
      const w = Math.floor(t / 64);
      const l = t % 64;
      for (let m0 = 0; m0 < 2; m0++)
        for (let k1 = 0; k1 < 8; k1++) {
          expect(enc.calculateXIndex([w, l], [m0, k1])).toEqual([32 * m0 + 8 * w + Math.floor(l / 8), 8 * (l % 8) + k1]);
          expect(enc.calculateD([m0, k1])).toBe(8 * m0 + k1);
        }
    }
    // A few threads' cells, written out.
    expect(threadCells(enc, 0, 64)).toEqual({ rows: [0, 32], cols: range(0, 8) });
    expect(threadCells(enc, 1, 64)).toEqual({ rows: [0, 32], cols: range(8, 16) });
    expect(threadCells(enc, 8, 64)).toEqual({ rows: [1, 33], cols: range(0, 8) });
    expect(threadCells(enc, 63, 64)).toEqual({ rows: [7, 39], cols: range(56, 64) });
    expect(threadCells(enc, 64, 64)).toEqual({ rows: [8, 40], cols: range(0, 8) });
    expect(threadCells(enc, 255, 64)).toEqual({ rows: [31, 63], cols: range(56, 64) });
    expect(bijectionModuloRViolation(enc)).toBeUndefined();
    expect(enc.distributedSpans()).toEqual([[{ minor: 0, length: 2, y: 0 }], [{ minor: 1, length: 8, y: 1 }]]);
  });

  it('acceptance: re-derived for 32-lane warps (H200): M2 = 4, M1 = 8 warps, m = 32·m0 + 4·w + ⌊l/8⌋', () => {
    const enc = makeVectorLoadEncoding({ rows: 64, cols: 64, vectorLength: 8, warpSize: 32, numWarps: 8 });
    const literal = new TileDistributionEncoding({
      hs: [
        [2, 8, 4],
        [8, 8],
      ],
      ps: [[hRef(0, 1)], [hRef(0, 2), hRef(1, 0)]],
      ys: [hRef(0, 0), hRef(1, 1)],
    });
    expect(enc.equals(literal)).toBe(true);
    expect(enc.toString()).toBe('TileDistributionEncoding R () H ((2, 8, 4), (8, 8)); P0 → h0[1]; P1 → h0[2] h1[0]; Y → h0[0] h1[1]');
    expect(enc.pLengths).toEqual([8, 32]);
    const covered = new Set<number>();
    for (let t = 0; t < 256; t++) {
      const w = Math.floor(t / 32);
      const l = t % 32;
      for (let d = 0; d < 16; d++) {
        const [m0, k1] = [Math.floor(d / 8), d % 8];
        const x = enc.calculateXIndexFromD([w, l], d);
        expect(x).toEqual([32 * m0 + 4 * w + Math.floor(l / 8), 8 * (l % 8) + k1]);
        covered.add(x[0]! * 64 + x[1]!);
      }
    }
    expect(covered.size).toBe(4096); // 256 threads × 16 registers, each element exactly once
    expect(threadCells(enc, 0, 32)).toEqual({ rows: [0, 32], cols: range(0, 8) });
    expect(threadCells(enc, 31, 32)).toEqual({ rows: [3, 35], cols: range(56, 64) });
    expect(threadCells(enc, 32, 32)).toEqual({ rows: [4, 36], cols: range(0, 8) });
    expect(threadCells(enc, 255, 32)).toEqual({ rows: [31, 63], cols: range(56, 64) });
    expect(bijectionModuloRViolation(enc)).toBeUndefined();
  });

  it('derives the ps_ys_to_xs adaptor and ys_to_d descriptor from @tilekit/layout as CK does', () => {
    const enc = new TileDistributionEncoding({ ...digestWave64, rs: [2], ps: [[hRef(0, 1)], [hRef(0, 2), rRef(0), hRef(1, 0)]] });
    const a = enc.psYsToXsAdaptor;
    expect(a.transforms.map((t) => t.toString())).toEqual([
      'replicate(2)',
      'unmerge(2, 4, 8)',
      'unmerge(8, 8)',
      'merge(4)',
      'merge(8, 2, 8)',
    ]);
    // X0, X1 = hidden 0, 1; R = 2; H_M = 3..5; H_K = 6, 7; P0, P1 = 8, 9.
    expect(a.bottomDimHiddenIds).toEqual([0, 1]);
    expect(a.topDimHiddenIds).toEqual([8, 9, 3, 7]);
    expect(a.topLengths).toEqual([4, 128, 2, 8]);
    expect(enc.digitHiddenId(rRef(0))).toBe(2);
    expect(enc.digitHiddenId(hRef(1, 1))).toBe(7);
    expect(enc.ysToDDescriptor.lengths).toEqual([2, 8]);
    expect(enc.ysToDDescriptor.elementSpaceSize).toBe(16);
    // Lanes l and l + 8 differ only in the R digit: replicas of each other.
    expect(enc.calculateXIndex([1, 3], [1, 5])).toEqual(enc.calculateXIndex([1, 3 + 8], [1, 5]));
    expect(enc.calculateRIndex([1, 3])).toEqual([0]);
    expect(enc.calculateRIndex([1, 11])).toEqual([1]);
    // m = 40 = 32·1 + 8·1 + 0 and k = 13 = 8·1 + 5: warp 1, lanes 16·0 + 8·r + 1.
    expect(enc.owners([40, 13])).toEqual([
      { ps: [1, 1], ys: [1, 5], d: 13, rs: [0] },
      { ps: [1, 9], ys: [1, 5], d: 13, rs: [1] },
    ]);
    expect(bijectionModuloRViolation(enc)).toBeUndefined();
    expect(enc.registersPerThread(16)).toBe(8);
    expect(enc.ps2rhsMajor).toEqual([[1], [1, 0, 2]]);
    expect(enc.ps2rhsMinor).toEqual([[1], [2, 0, 0]]);
    expect(enc.ys2rhsMajor).toEqual([1, 2]);
    expect(enc.ys2rhsMinor).toEqual([0, 1]);
  });
});

describe('well-formedness', () => {
  const bad: [string, TileDistributionEncodingSpec, RegExp][] = [
    ['a zero length', { hs: [[0]], ps: [[hRef(0, 0)]], ys: [] }, /length must be an integer ≥ 1/],
    ['no X dimension', { hs: [], ps: [], ys: [] }, /at least one X dimension/],
    ['a major past the X dims', { hs: [[2]], ps: [[hRef(1, 0)]], ys: [] }, /major must be 0 \(R\) or 1\.\.1/],
    ['a minor past the H list', { hs: [[2]], ps: [[hRef(0, 1)]], ys: [] }, /minor must index the H list of X0/],
    ['an H digit referenced twice', { hs: [[2, 2]], ps: [[hRef(0, 0)]], ys: [hRef(0, 0), hRef(0, 1)] }, /already referenced by P0/],
    ['an H digit nobody references', { hs: [[2, 2]], ps: [[hRef(0, 0)]], ys: [] }, /h0\[1\] unreferenced/],
    ['a Y referencing R', { rs: [2], hs: [[2]], ps: [[hRef(0, 0)]], ys: [rRef(0)] }, /R digits belong to P only/],
    ['an unreferenced R digit longer than 1', { rs: [2], hs: [[2]], ps: [[hRef(0, 0)]], ys: [] }, /r\[0\] unreferenced/],
    ['an empty P', { hs: [[2]], ps: [[], [hRef(0, 0)]], ys: [] }, /at least one digit/],
  ];
  for (const [name, spec, message] of bad) {
    it(`rejects ${name}`, () => {
      let error: unknown;
      try {
        new TileDistributionEncoding(spec);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(EncodingError);
      expect((error as EncodingError).code).toBe('tile/invalid-encoding');
      expect((error as Error).message).toMatch(message);
    });
  }

  it('accepts CK idioms: R = (1) unreferenced, an X without digits, no Y at all', () => {
    const enc = new TileDistributionEncoding({ rs: [1], hs: [[4], []], ps: [[hRef(0, 0)]], ys: [] });
    expect(enc.xLengths).toEqual([4, 1]);
    expect(enc.threadBufferSize).toBe(1);
    expect(enc.calculateXIndex([3], [])).toEqual([3, 0]);
    expect(enc.calculateD([])).toBe(0);
    expect(enc.calculateYIndex(0)).toEqual([]);
    expect(enc.owners([2, 0])).toEqual([{ ps: [2], ys: [], d: 0, rs: [0] }]);
    expect(bijectionModuloRViolation(enc)).toBeUndefined();
  });

  it('checks index arity and range', () => {
    const enc = new TileDistributionEncoding(digestWave64);
    expect(() => enc.calculateXIndex([0], [0, 0])).toThrow(TileArityError);
    expect(() => enc.calculateXIndex([4, 0], [0, 0])).toThrow(TileIndexRangeError);
    expect(() => enc.owners([64, 0])).toThrow(TileIndexRangeError);
    expect(() => enc.calculateYIndex(16)).toThrow(TileIndexRangeError);
  });
});

describe('random well-formed encodings', () => {
  it('the layout adaptor equals the direct definition (testing/bruteForce.ts), and (P, Y) → X is a bijection modulo R', () => {
    fc.assert(
      fc.property(encodingArb(), (enc) => {
        for (const ps of allIndices(enc.pLengths)) {
          expect(enc.calculateRIndex(ps)).toEqual(referenceRIndex(enc, ps));
          expect(enc.partitionIndexOf(enc.threadOf(ps))).toEqual(ps);
          for (const ys of allIndices(enc.yLengths))
            expect(enc.calculateXIndex(ps, ys), enc.toString()).toEqual(referenceXIndex(enc, ps, ys));
        }
        expect(bijectionModuloRViolation(enc)).toBeUndefined();
      }),
      { numRuns: 120 },
    );
  });

  it('ys_to_d is row-major over Y (last fastest) and calculateYIndex inverts it; spans cover the Ys', () => {
    fc.assert(
      fc.property(encodingArb(), (enc) => {
        let d = 0;
        for (const ys of allIndices(enc.yLengths)) {
          expect(enc.calculateD(ys)).toBe(d);
          expect(enc.calculateYIndex(d)).toEqual(ys);
          d++;
        }
        const spans = enc.distributedSpans().flat();
        expect(spans.map((s) => s.y).sort((a, b) => a - b)).toEqual(enc.yLengths.map((_, y) => y));
        spans.forEach((s) => expect(enc.yLengths[s.y]).toBe(s.length));
        expect(new TileDistributionEncoding(enc.toSpec()).equals(enc)).toBe(true);
      }),
      { numRuns: 100 },
    );
  });

  it('composes symbolically through @tilekit/layout (the path C++ emission takes): X of symbolic P equals the numeric X', () => {
    fc.assert(
      fc.property(encodingArb({ maxPairs: 512 }), (enc) => {
        const ps = enc.pLengths.map((l, p) => sym.indexVar(`p${p}`, { min: 0, max: l - 1, extent: l }));
        for (const ys of allIndices(enc.yLengths)) {
          const { hidden } = composeTensorAdaptor(enc.psYsToXsAdaptor, [...ps, ...ys]);
          const xs = enc.psYsToXsAdaptor.bottomDimHiddenIds.map((id) => hidden[id]!);
          for (const pv of allIndices(enc.pLengths)) {
            const env = Object.fromEntries(pv.map((v, p) => [`p${p}`, v]));
            expect(xs.map((x) => evaluateSymInt(x, env))).toEqual(enc.calculateXIndex(pv, ys));
          }
        }
      }),
      { numRuns: 40 },
    );
  });
});
