import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SpargeArgumentError } from './spargeArgumentError.ts';
import { decodeSpargeLut, encodeSpargeLut, spargeLutRowBlocks, type SpargeBlockMap } from './spargeLut.ts';

const blockMapArb: fc.Arbitrary<SpargeBlockMap> = fc
  .record({
    batch: fc.integer({ min: 1, max: 2 }),
    nhead: fc.integer({ min: 1, max: 3 }),
    qBlocks: fc.integer({ min: 1, max: 5 }),
    kBlocks: fc.integer({ min: 1, max: 12 }),
  })
  .chain((g) =>
    fc
      .uint8Array({
        min: 0,
        max: 1,
        minLength: g.batch * g.nhead * g.qBlocks * g.kBlocks,
        maxLength: g.batch * g.nhead * g.qBlocks * g.kBlocks,
      })
      .map((map) => ({ ...g, map })),
  );

describe('spargeLut', () => {
  it('encodes a golden row as upstream (absolute first index, then deltas, zero tail)', () => {
    const lut = encodeSpargeLut({ batch: 1, nhead: 1, qBlocks: 2, kBlocks: 6, map: Uint8Array.from([0, 1, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0]) });
    expect(Array.from(lut.lut)).toEqual([1, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    expect(Array.from(lut.validBlockNum)).toEqual([3, 0]);
    expect(spargeLutRowBlocks(lut, 0)).toEqual([1, 3, 4]);
  });

  it('round-trips, counts the ones and lists ascending blocks', () => {
    fc.assert(
      fc.property(blockMapArb, (m) => {
        const lut = encodeSpargeLut(m);
        expect(decodeSpargeLut(lut)).toEqual(m);
        for (let r = 0; r < m.batch * m.nhead * m.qBlocks; r++) {
          const row = Array.from(m.map.subarray(r * m.kBlocks, (r + 1) * m.kBlocks));
          const blocks = spargeLutRowBlocks(lut, r);
          expect(lut.validBlockNum[r]).toBe(row.reduce((a, b) => a + b, 0));
          expect(blocks).toEqual(row.flatMap((bit, j) => (bit === 1 ? [j] : [])));
          for (let t = 1; t < blocks.length; t++) expect(blocks[t]!).toBeGreaterThan(blocks[t - 1]!);
        }
      }),
    );
  });

  it('rejects inconsistent LUTs and maps with typed errors', () => {
    const good = encodeSpargeLut({ batch: 1, nhead: 1, qBlocks: 1, kBlocks: 4, map: Uint8Array.from([1, 0, 1, 0]) });
    const bad = (lut: number[], valid: number): unknown =>
      decodeSpargeLut({ ...good, lut: Int32Array.from(lut), validBlockNum: Int32Array.from([valid]) });
    expect(() => bad([0, 2, 0, 0], 2)).not.toThrow();
    expect(() => bad([0, 0, 0, 0], 2)).toThrow(SpargeArgumentError); // repeated block
    expect(() => bad([3, 1, 0, 0], 2)).toThrow(/kBlocks/);
    expect(() => bad([-1, 0, 0, 0], 1)).toThrow(SpargeArgumentError);
    expect(() => bad([0, 2, 1, 0], 2)).toThrow(/past validBlockNum/);
    expect(() => bad([0, 0, 0, 0], 5)).toThrow(/validBlockNum/);
    expect(() => encodeSpargeLut({ batch: 1, nhead: 1, qBlocks: 1, kBlocks: 2, map: Uint8Array.from([2, 0]) })).toThrow(/0 or 1/);
    expect(() => encodeSpargeLut({ batch: 1, nhead: 1, qBlocks: 1, kBlocks: 2, map: Uint8Array.from([1]) })).toThrow(SpargeArgumentError);
  });
});
