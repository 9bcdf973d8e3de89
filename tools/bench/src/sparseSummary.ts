import type { BenchCase, BenchSuiteResult } from './benchResult.ts';

/** What a sparse-attention case records beside its time (docs/benchmarks.md: the sparsity actually achieved, the prediction stage apart). */
interface SparseFigures {
  readonly achievedSparsity: number;
  /** The attention alone (timed on its own). */
  readonly attentionMs: number;
  /** The headline: block map + attention, timed together (`ours.ms`). */
  readonly totalMs: number;
  readonly denseMs: number;
}

function sparseFigures(c: BenchCase): SparseFigures | undefined {
  const o = c.ours as unknown as Record<string, unknown>;
  const keys = ['achievedSparsity', 'attentionMs', 'denseMs'] as const;
  if (!keys.every((k) => typeof o[k] === 'number')) return undefined;
  return {
    achievedSparsity: o['achievedSparsity'] as number,
    attentionMs: o['attentionMs'] as number,
    totalMs: c.ours.ms,
    denseMs: o['denseMs'] as number,
  };
}

/**
 * For suites of sparse kernels (cases whose `ours` carries achievedSparsity, attentionMs and denseMs;
 * `ours.ms` is the headline, block map + attention): a second table with the sparsity, the prediction
 * stage's time (headline − attention alone) and its share of the dense attention time, the sparse
 * attention and total times, and both speedups over our dense kernel.
 * Undefined when no case has those figures.
 */
export function formatSparseSummary(result: BenchSuiteResult): string | undefined {
  const rows = result.cases.flatMap((c) => {
    const f = sparseFigures(c);
    if (f === undefined) return [];
    const blockMapMs = f.totalMs - f.attentionMs;
    const pct = (100 * blockMapMs) / f.denseMs;
    return [
      [
        c.name,
        f.achievedSparsity.toFixed(3),
        `${blockMapMs.toFixed(3)} (${pct.toFixed(1)}%)`,
        f.attentionMs.toFixed(3),
        f.totalMs.toFixed(3),
        f.denseMs.toFixed(3),
        c.valid ? `${(f.denseMs / f.attentionMs).toFixed(2)}× / ${(f.denseMs / f.totalMs).toFixed(2)}×` : 'INVALID',
        c.valid ? 'yes' : '**no**',
      ],
    ];
  });
  if (rows.length === 0) return undefined;
  const header = [
    'case',
    'sparsity',
    'block map ms (% of dense)',
    'sparse attention ms',
    'total ms',
    'our dense ms',
    'vs our dense: attention / total',
    'valid',
  ];
  return [
    `| ${header.join(' | ')} |`,
    `|${header.map((_, i) => (i === 0 ? '---' : '---:')).join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');
}
