import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { dsaTopkReference } from '../reference/dsaTopkReference.ts';
import { dsaTopkLogitArbitrary, dsaTopkLogits, DSA_TOPK_LOGIT_STYLES } from '../testing/dsaTopkLogits.ts';
import { dsaRadixSelect, dsaTopkRowKeys } from './dsaRadixSelectPlan.ts';
import { dsaRadixSelectTwoRead, dsaRadixSelectTwoReadPlan } from './dsaRadixSelectTwoRead.ts';
import { DSA_TOPK_TWO_READ_CATALOG, DSA_TOPK_TWO_READ_LIST_CAPACITY, dsaTopkTwoReadInstanceFor } from './dsaTopkTwoReadCatalog.ts';
import { DsaTopkTwoReadInstance } from './dsaTopkTwoReadInstance.ts';
import { dsaTopkIndexOutput } from './dsaTopkIndexOutput.ts';
import { dsaTopkTwoReadCases } from '../testing/dsaTopkTwoReadCases.ts';

const rowKeys = (rows: { logits: Float32Array; rowStride: number; lengths?: ArrayLike<number> }, r: number): Uint32Array =>
  dsaTopkRowKeys(
    rows.logits,
    r * rows.rowStride,
    rows.lengths === undefined ? rows.rowStride : Math.max(0, Math.min(rows.rowStride, rows.lengths[r]!)),
  );

describe('dsaRadixSelectTwoRead (the two-read kernel pass for pass on the CPU)', () => {
  it('equals dsaTopkReference on random rows (ties, −∞ runs, NaN, ±0, lengths, k past the row, lists that overflow)', () => {
    fc.assert(
      fc.property(dsaTopkLogitArbitrary({ maxRows: 3, maxRowStride: 700 }), fc.constantFrom(1, 3, 16, 64, 256, 16384), (rows, capacity) => {
        expect(dsaRadixSelectTwoRead(rows, capacity)).toEqual(dsaTopkReference(rows));
      }),
      { numRuns: 1500, seed: 20_11 },
    );
  });

  it('equals dsaTopkReference on long rows with k up to 4096 (the catalog list and tight ones)', () => {
    const ks = fc.oneof(fc.constantFrom(1, 7, 2048, 4095, 4096), fc.integer({ min: 1, max: 4096 }));
    fc.assert(
      fc.property(
        fc.record({
          seed: fc.nat(),
          rowStride: fc.integer({ min: 4000, max: 20000 }),
          style: fc.constantFrom(...DSA_TOPK_LOGIT_STYLES),
          lengths: fc.constantFrom<'none' | 'random'>('none', 'random'),
          k: ks,
        }),
        fc.constantFrom(4096, 5000, 16384),
        (o, capacity) => {
          const rows = dsaTopkLogits({ ...o, rows: 1 });
          expect(dsaRadixSelectTwoRead(rows, capacity)).toEqual(dsaTopkReference(rows));
        },
      ),
      { numRuns: 150, seed: 20_12 },
    );
  });

  it('reaches every path, reads the row twice on the list path, and agrees with the three-read twin', () => {
    const seen = new Set<string>();
    fc.assert(
      fc.property(dsaTopkLogitArbitrary({ maxRows: 1, maxRowStride: 700 }), fc.constantFrom(8, 64, 16384), (rows, capacity) => {
        const keys = rowKeys(rows, 0);
        const s = dsaRadixSelectTwoReadPlan(keys, rows.k, capacity);
        seen.add(s.path === 'list' ? `list ${s.plan.passes}` : s.path);
        if (s.path === 'list') {
          expect(s.rowReads).toBe(2);
          expect(s.list!.positions.every((p, i) => i === 0 || p > s.list!.positions[i - 1]!)).toBe(true);
          expect(s.list!.positions.length).toBeLessThanOrEqual(capacity);
        }
        expect(dsaRadixSelectTwoRead(rows, capacity)).toEqual(dsaRadixSelect(rows, capacity));
      }),
      { numRuns: 1500, seed: 20_13 },
    );
    expect([...seen].sort()).toEqual(['decided', 'list 2', 'list 3', 'overflow']);
  });

  it('lists about k + a bin of a normal 128K row at k 2048 (two reads), and falls back on all-equal rows', () => {
    const normal = dsaTopkLogits({ seed: 99, rows: 1, rowStride: 131072, k: 2048, style: 'normal' });
    const s = dsaRadixSelectTwoReadPlan(rowKeys(normal, 0), 2048, 16384);
    expect(s.path).toBe('list');
    expect(s.list!.positions.length).toBeLessThan(4096);
    expect(dsaRadixSelectTwoRead(normal, 16384)).toEqual(dsaTopkReference(normal));
    const equal = dsaTopkLogits({ seed: 5, rows: 2, rowStride: 20000, k: 4096, style: 'allEqual' });
    expect(dsaRadixSelectTwoReadPlan(rowKeys(equal, 0), 4096, 16384).path).toBe('overflow');
    expect(dsaRadixSelectTwoRead(equal, 16384)).toEqual(dsaTopkReference(equal));
    const ties = Float32Array.from({ length: 40 }, (_, p) => (p % 3 === 0 ? 2 : p % 5 === 0 ? Number.NaN : 1 + p / 64));
    const rows = { logits: ties, rows: 1, rowStride: 40, k: 10 };
    expect(dsaRadixSelectTwoRead(rows, 40)).toEqual(dsaTopkReference(rows));
  });
});

describe('dsaTopkTwoReadCases (the GPU spec boundary rows)', () => {
  it('take the path each names with the catalog list, and the twin equals dsaTopkReference on them', () => {
    for (const c of dsaTopkTwoReadCases(DSA_TOPK_TWO_READ_LIST_CAPACITY)) {
      const rows = c.rows();
      expect(dsaRadixSelectTwoReadPlan(rowKeys(rows, 0), rows.k, DSA_TOPK_TWO_READ_LIST_CAPACITY).path, c.label).toBe(c.path);
      expect(dsaRadixSelectTwoRead(rows, DSA_TOPK_TWO_READ_LIST_CAPACITY), c.label).toEqual(dsaTopkReference(rows));
    }
  });
});

describe('DSA_TOPK_TWO_READ_CATALOG', () => {
  it('has one instance per form and load width and rejects lists past the shared memory', () => {
    expect(DSA_TOPK_TWO_READ_CATALOG.map((i) => [i.name, i.sharedBytes])).toEqual([
      ['dsa_topk_2r_index_t1024_v4_u2_l16384', 147872],
      ['dsa_topk_2r_index_t1024_v1_u2_l16384', 147872],
      ['dsa_topk_2r_pageTable_t1024_v4_u2_l16384', 147872],
      ['dsa_topk_2r_pageTable_t1024_v1_u2_l16384', 147872],
    ]);
    expect(dsaTopkTwoReadInstanceFor('pageTable', 1).policy.vector).toBe(1);
    const policy = { threads: 1024, vector: 4, unroll: 2, listCapacity: 32768, output: dsaTopkIndexOutput } as const;
    expect(() => new DsaTopkTwoReadInstance(policy)).toThrow(/policy.listCapacity/);
  });
});
