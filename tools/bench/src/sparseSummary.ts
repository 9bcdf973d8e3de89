import type { BenchCase, BenchSuiteResult } from './benchResult.ts';

/** What a sparse-attention case records beside its time (BENCHMARKS.md: the sparsity actually achieved, the prediction stage apart). */
interface SparseFigures {
  readonly achievedSparsity: number;
  readonly blockMapMs: number;
  readonly totalMs: number;
  readonly denseMs: number;
}

function sparseFigures(c: BenchCase): SparseFigures | undefined {
  const o = c.ours as unknown as Record<string, unknown>;
  const keys = ['achievedSparsity', 'blockMapMs', 'totalMs', 'denseMs'] as const;
  if (!keys.every((k) => typeof o[k] === 'number')) return undefined;
  return { achievedSparsity: o['achievedSparsity'] as number, blockMapMs: o['blockMapMs'] as number, totalMs: o['totalMs'] as number, denseMs: o['denseMs'] as number };
}

/**
 * For suites of sparse kernels (cases whose `ours` carries achievedSparsity, blockMapMs, totalMs and
 * denseMs): a second table with the sparsity, the prediction stage's time and share of the dense
 * attention time, the sparse attention and total times, and both speedups over our dense kernel.
 * Undefined when no case has those figures.
 */
export function formatSparseSummary(result: BenchSuiteResult): string | undefined {
  const rows = result.cases.flatMap((c) => {
    const f = sparseFigures(c);
    if (f === undefined) return [];
    const pct = (100 * f.blockMapMs) / f.denseMs;
    return [
      [
        c.name,
        f.achievedSparsity.toFixed(3),
        `${f.blockMapMs.toFixed(3)} (${pct.toFixed(1)}%)`,
        c.ours.ms.toFixed(3),
        f.totalMs.toFixed(3),
        f.denseMs.toFixed(3),
        c.valid ? `${(f.denseMs / c.ours.ms).toFixed(2)}× / ${(f.denseMs / f.totalMs).toFixed(2)}×` : 'INVALID',
        c.valid ? 'yes' : '**no**',
      ],
    ];
  });
  if (rows.length === 0) return undefined;
  const header = ['case', 'sparsity', 'block map ms (% of dense)', 'sparse attention ms', 'total ms', 'our dense ms', 'vs our dense: attention / total', 'valid'];
  return [`| ${header.join(' | ')} |`, `|${header.map((_, i) => (i === 0 ? '---' : '---:')).join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}
