import fc from 'fast-check';
import { encodeSpargeLut, spargeCausalBlockAllowed } from '@tilekit/kernel-sparge';
import { describe, expect, it } from 'vitest';
import { spargeMapDensity, spargeMapMismatches, spargeVisitedMap } from './spargeVisitedMap.ts';

const grid = { batch: 2, nhead: 3, qBlocks: 4, kBlocks: 5 };
const cells = 2 * 3 * 4 * 5;
const randomMap = fc.uint8Array({ minLength: cells, maxLength: cells }).map((x) => x.map((v) => v & 1));

describe('spargeVisitedMap', () => {
  it('vsa: the map the LUT walks (the one-hot map is not read)', () => {
    fc.assert(
      fc.property(randomMap, (map) => {
        const { lut, validBlockNum } = encodeSpargeLut({ ...grid, map });
        const stale = new Uint8Array(cells).fill(1);
        expect(spargeVisitedMap('vsa', grid, { map: stale, lut, validBlockNum })).toEqual(map);
      }),
    );
  });

  it('vsa: a malformed LUT (descending entries, a block past kBlocks) is an error, not a map', () => {
    const map = new Uint8Array(cells);
    const { lut, validBlockNum } = encodeSpargeLut({ ...grid, map: map.fill(1) });
    const descending = lut.slice();
    descending[1] = 0;
    expect(() => spargeVisitedMap('vsa', grid, { map, lut: descending, validBlockNum })).toThrow(/deltas must be ≥ 1/);
    const far = validBlockNum.slice();
    far[0] = 6;
    expect(() => spargeVisitedMap('vsa', grid, { map, lut, validBlockNum: far })).toThrow(/validBlockNum\[0\]/);
  });

  it('jenga: the one-hot map, any nonzero entry visited', () => {
    const map = Uint8Array.from({ length: cells }, (_, i) => i % 3);
    const got = spargeVisitedMap('jenga', grid, { map, lut: new Int32Array(cells), validBlockNum: new Int32Array(24) });
    expect([...got]).toEqual([...map].map((x) => (x === 0 ? 0 : 1)));
    expect(() =>
      spargeVisitedMap('jenga', grid, { map: map.subarray(1), lut: new Int32Array(cells), validBlockNum: new Int32Array(24) }),
    ).toThrow(/entries/);
  });
});

describe('spargeMapMismatches', () => {
  it('counts differing entries; arrays of different lengths are an error', () => {
    expect(spargeMapMismatches(Uint8Array.of(0, 1, 1), Uint8Array.of(0, 0, 1))).toBe(1);
    expect(spargeMapMismatches(Int32Array.of(3, -1), Int32Array.of(3, -1))).toBe(0);
    expect(() => spargeMapMismatches(Uint8Array.of(0), Uint8Array.of(0, 1))).toThrow(/1 and 2 entries/);
  });
});

describe('spargeMapDensity', () => {
  it('is visited / all blocks without causality, and 1 for the full map', () => {
    fc.assert(
      fc.property(randomMap, (map) => {
        const ones = map.reduce((a, b) => a + b, 0);
        expect(spargeMapDensity(map, grid, { s: 512, blockQ: 128, blockK: 128, causal: false })).toBeCloseTo(ones / cells, 12);
      }),
    );
  });

  it('causal: counts only blocks dense attention visits, so the causal full map has density 1', () => {
    const square = { batch: 1, nhead: 2, qBlocks: 4, kBlocks: 4 };
    const causal = { s: 512, blockQ: 128, blockK: 128, causal: true };
    const full = new Uint8Array(32).fill(1);
    expect(spargeMapDensity(full, square, causal)).toBe(1);
    const lower = full.map((_, n) => (spargeCausalBlockAllowed(Math.floor(n / 4) % 4, n % 4, 128, 128, 512) ? 1 : 0));
    expect(spargeMapDensity(lower, square, causal)).toBe(1);
    const diagonal = full.map((_, n) => (Math.floor(n / 4) % 4 === n % 4 ? 1 : 0));
    expect(spargeMapDensity(diagonal, square, causal)).toBe(8 / 20);
  });
});
