import { hasAnyFigure, isBaselineError, suiteMetric, type BenchSuiteResult } from './benchResult.ts';
import { baselineNames } from './markdownReport.ts';

const palette = ['#d62728', '#1f77b4', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b'];
const labelWidth = 260;
const plotWidth = 520;
const barHeight = 14;
const groupGap = 12;

function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

/**
 * A horizontal grouped bar chart: for each case, our bar (first colour) and one bar per baseline,
 * on one shared axis of the suite's metric. Deterministic output, so it diffs cleanly in git.
 */
export function renderBenchSvg(all: BenchSuiteResult): string {
  // Cases timed without a figure (dsa's decode step) have no bar on this axis: formatTimedCases lists them.
  const result = { ...all, cases: all.cases.filter(hasAnyFigure) };
  const metric = suiteMetric(result);
  const series = ['ours', ...baselineNames(result)];
  const valueOf = (caseIndex: number, s: string): number | undefined => {
    const c = result.cases[caseIndex];
    if (!c) return undefined;
    if (s === 'ours') return c.valid ? c.ours[metric] : undefined;
    const m = c.baselines[s];
    return m === undefined || isBaselineError(m) ? undefined : m[metric];
  };
  let max = 0;
  result.cases.forEach((_, i) => series.forEach((s) => (max = Math.max(max, valueOf(i, s) ?? 0))));
  const scale = max > 0 ? plotWidth / max : 0;
  const groupHeight = series.length * barHeight + groupGap;
  const top = 40;
  const height = top + result.cases.length * groupHeight + 30;
  const width = labelWidth + plotWidth + 90;
  const unit = metric === 'tflops' ? 'TFLOP/s' : 'GB/s';
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="11">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="10" y="18" font-size="14" font-weight="bold">${escapeXml(`${result.suite}: ${unit} on ${result.device} (${result.date})`)}</text>`,
  ];
  series.forEach((s, k) => {
    const x = labelWidth + k * 120;
    parts.push(`<rect x="${x}" y="26" width="10" height="10" fill="${palette[k % palette.length]}"/>`);
    parts.push(`<text x="${x + 14}" y="35">${escapeXml(s)}</text>`);
  });
  result.cases.forEach((c, i) => {
    const y0 = top + i * groupHeight + 4;
    const label = c.valid ? c.name : `${c.name} (INVALID)`;
    parts.push(`<text x="${labelWidth - 6}" y="${y0 + (series.length * barHeight) / 2 + 4}" text-anchor="end">${escapeXml(label)}</text>`);
    series.forEach((s, k) => {
      const v = valueOf(i, s);
      const y = y0 + k * barHeight;
      if (v === undefined) {
        parts.push(`<text x="${labelWidth + 4}" y="${y + 11}" fill="#888">${s === 'ours' ? 'invalid' : 'n/a'}</text>`);
        return;
      }
      const w = Math.max(1, Math.round(v * scale));
      parts.push(`<rect x="${labelWidth}" y="${y}" width="${w}" height="${barHeight - 2}" fill="${palette[k % palette.length]}"/>`);
      parts.push(`<text x="${labelWidth + w + 4}" y="${y + 11}">${v.toFixed(v >= 100 ? 0 : 1)}</text>`);
    });
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
