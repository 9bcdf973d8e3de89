import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { dsaTopkReference } from '../reference/dsaTopkReference.ts';
import { clusterCases } from '../testing/dsaTopkGpuCases.ts';
import { dsaTopkLogitArbitrary, dsaTopkLogits } from '../testing/dsaTopkLogits.ts';
import { dsaTopkClusterSizeFor } from './dsaTopkCatalog.ts';
import { dsaRadixSelectPlan, dsaTopkRowKeys } from './dsaRadixSelectPlan.ts';
import { dsaTopkClusterPlan, dsaTopkClusterSelect, dsaTopkClusterSlice } from './dsaTopkClusterPlan.ts';

const CLUSTERS = [1, 2, 4, 8] as const;

describe('dsaTopkClusterSlice', () => {
  it('covers the row with C slices of a multiple of 16 positions, none longer than needed by more than 15', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 20 }), fc.constantFrom(...CLUSTERS), (stride, c) => {
        const s = dsaTopkClusterSlice(stride, c);
        expect(s % 16).toBe(0);
        expect(s * c).toBeGreaterThanOrEqual(stride);
        expect(s - Math.ceil(stride / c)).toBeLessThan(16);
      }),
      { numRuns: 500, seed: 20_11 },
    );
    expect([dsaTopkClusterSlice(131072, 8), dsaTopkClusterSlice(65536, 8), dsaTopkClusterSlice(100, 8), dsaTopkClusterSlice(1, 1)]).toEqual(
      [16384, 8192, 16, 16],
    );
  });
});

describe('dsaTopkClusterSelect (the cluster kernel on the CPU)', () => {
  it('equals dsaTopkReference on random rows for clusters of 1, 2, 4 and 8 CTAs (ties across slices, lengths ending inside a slice)', () => {
    fc.assert(
      fc.property(dsaTopkLogitArbitrary({ maxRows: 3, maxRowStride: 700 }), fc.constantFrom(...CLUSTERS), (rows, cluster) => {
        expect(dsaTopkClusterSelect(rows, cluster)).toEqual(dsaTopkReference(rows));
      }),
      { numRuns: 1500, seed: 20_12 },
    );
  });

  it('decides the threshold of the single-CTA plan; the shares add up to the selection, in slice order', () => {
    fc.assert(
      fc.property(dsaTopkLogitArbitrary({ maxRows: 1, maxRowStride: 900 }), fc.constantFrom(...CLUSTERS), (rows, cluster) => {
        const length = rows.lengths === undefined ? rows.rowStride : Math.max(0, Math.min(rows.rowStride, rows.lengths[0]!));
        const keys = dsaTopkRowKeys(rows.logits, 0, length);
        const plan = dsaTopkClusterPlan(keys, rows.rowStride, rows.k, cluster);
        const single = dsaRadixSelectPlan(keys, rows.k, 1 << 20);
        expect([plan.candidates, plan.selected, plan.threshold, plan.equalTaken, plan.passes]).toEqual([
          single.candidates,
          single.selected,
          single.threshold,
          single.equalTaken,
          single.passes,
        ]);
        expect(plan.ctas).toHaveLength(cluster);
        expect(plan.ctas.reduce((s, c) => s + c.above + c.equalKept, 0)).toBe(plan.selected);
        plan.ctas.forEach((c, r) => {
          if (r > 0) expect(c.base).toBe(plan.ctas[r - 1]!.base + plan.ctas[r - 1]!.above + plan.ctas[r - 1]!.equalKept);
        });
      }),
      { numRuns: 800, seed: 20_13 },
    );
  });

  it('gives the ties of an all-equal row to the lowest slices', () => {
    const logits = new Float32Array(1000).fill(0.25);
    const rows = { logits, rows: 1, rowStride: 1000, k: 300 };
    const plan = dsaTopkClusterPlan(dsaTopkRowKeys(logits, 0, 1000), 1000, 300, 8);
    expect(plan.ctas.map((c) => c.equalKept)).toEqual([128, 128, 44, 0, 0, 0, 0, 0]);
    expect(plan.ctas.map((c) => c.base)).toEqual([0, 128, 256, 300, 300, 300, 300, 300]);
    expect(dsaTopkClusterSelect(rows, 8)).toEqual(dsaTopkReference(rows));
  });

  it('keeps everything of a row with at most k candidates, −1 after', () => {
    const logits = Float32Array.from({ length: 40 }, (_, i) => (i % 3 === 0 ? Number.NEGATIVE_INFINITY : i));
    const rows = { logits, rows: 1, rowStride: 40, k: 30, lengths: [37] };
    const got = dsaTopkClusterSelect(rows, 4);
    expect(got).toEqual(dsaTopkReference(rows));
    expect(got.slice(24)).toEqual(new Int32Array(6).fill(-1));
  });
});

describe('the GPU spec cluster cases', () => {
  it('take the cluster sizes their labels name, and the straddling ones split their ties over several CTAs', () => {
    for (const c of clusterCases()) {
      const cluster = dsaTopkClusterSizeFor(c.logits.rows, c.logits.rowStride);
      const named = /\((\d+) CTAs?/.exec(c.label);
      if (named !== null) expect(cluster, c.label).toBe(Number(named[1]));
      if (c.label.includes('one CTA per row')) expect(cluster, c.label).toBeUndefined();
      if (!c.label.includes('straddling')) continue;
      const rows = dsaTopkLogits(c.logits);
      const keys = dsaTopkRowKeys(rows.logits, 0, rows.rowStride);
      const plan = dsaTopkClusterPlan(keys, rows.rowStride, rows.k, cluster!);
      expect(plan.ctas.filter((s) => s.equalKept > 0).length, c.label).toBeGreaterThanOrEqual(2);
    }
  });
});
