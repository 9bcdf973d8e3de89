import { describe, expect, it } from 'vitest';
import type { BenchSuiteResult } from './benchResult.ts';
import { formatBenchMarkdown } from './markdownReport.ts';
import { formatSparseSummary } from './sparseSummary.ts';

const base = { suite: 's', device: 'H200', date: '2026-11-22', commit: 'abcdef0123' };
const dense = { name: 'dense', params: {}, ours: { ms: 2, tflops: 100, instance: 'k' }, baselines: {}, valid: true };

describe('formatSparseSummary', () => {
  it('is absent without sparse figures, so other suites keep their tables', () => {
    const r: BenchSuiteResult = { ...base, cases: [dense] };
    expect(formatSparseSummary(r)).toBeUndefined();
    expect(formatBenchMarkdown(r)).not.toContain('sparsity');
  });

  it('reports sparsity, the block map share of dense time and both speedups', () => {
    // The headline (ours.ms) is block map + attention: 2.4 ms, of which the attention alone is 2.
    const sparse = {
      ...dense,
      name: 'sp',
      ours: { ms: 2.4, tflops: 400, instance: 'k', achievedSparsity: 0.75, attentionMs: 2, denseMs: 8 },
    };
    const text = formatSparseSummary({ ...base, cases: [dense, sparse] })!;
    expect(text).toContain('| sp | 0.750 | 0.400 (5.0%) | 2.000 | 2.400 | 8.000 | 4.00× / 3.33× | yes |');
    expect(text.split('\n')).toHaveLength(3);
    expect(formatSparseSummary({ ...base, cases: [{ ...sparse, valid: false }] })).toContain('INVALID');
  });
});
