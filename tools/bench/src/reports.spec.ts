import { describe, expect, it } from 'vitest';
import { parseBenchResult, type BenchSuiteResult } from './benchResult.ts';
import { formatBenchMarkdown, formatOtherFigures, formatTimedCases } from './markdownReport.ts';
import { renderBenchSvg } from './svgChart.ts';

const sample: BenchSuiteResult = {
  suite: 'fmha-fwd',
  device: 'NVIDIA H200',
  date: '2026-11-22',
  commit: '0123456789abcdef',
  cases: [
    {
      name: 'b2_h16_s8192_d128_causal_fp16',
      params: { b: 2, h: 16, s: 8192, d: 128, causal: true, dtype: 'fp16' },
      ours: { ms: 1.0, tflops: 550.0, instance: 'fmha_fwd_d128' },
      baselines: { 'torch-flash': { ms: 1.8, tflops: 305.0 }, 'torch-cudnn': { ms: 0.99, tflops: 555.0 } },
      valid: true,
      maxAbsErr: 0.0009,
    },
    {
      name: 'b1_h48_s8192_d512_fp16',
      params: { b: 1, h: 48, s: 8192, d: 512 },
      ours: { ms: 2.0, tflops: 300.0, instance: 'ffpa_d512' },
      baselines: { 'torch-flash': { error: 'No available kernel' } },
      valid: false,
    },
  ],
};

describe('result format', () => {
  it('accepts the example shape of docs/benchmarks.md', () => {
    expect(parseBenchResult(JSON.parse(JSON.stringify(sample)))).toEqual(sample);
  });

  it('names the first field that is off', () => {
    const bad = JSON.parse(JSON.stringify(sample));
    bad.cases[0].ours.ms = -1;
    expect(() => parseBenchResult(bad)).toThrow(/result\.cases\[0\]\.ours\.ms: must be a positive finite number/);
    const noValid = JSON.parse(JSON.stringify(sample));
    delete noValid.cases[1].valid;
    expect(() => parseBenchResult(noValid)).toThrow(/result\.cases\[1\]\.valid/);
  });
});

describe('markdown table', () => {
  const md = formatBenchMarkdown(sample);

  it('compares against the best baseline that ran', () => {
    expect(md).toContain('| b2_h16_s8192_d128_causal_fp16 | 550 | 305 | 555 | 0.99× (torch-cudnn) | yes |');
  });

  it('marks invalid cases and lists baseline errors instead of dropping them', () => {
    expect(md).toContain('| b1_h48_s8192_d512_fp16 | 300 | error | – | INVALID | **no** |');
    expect(md).toContain('- b1_h48_s8192_d512_fp16 / torch-flash: No available kernel');
  });
});

describe('other figures (a GB/s suite with TFLOP/s cases and HBM fractions, as dsa-indexer)', () => {
  const mixed: BenchSuiteResult = {
    ...sample,
    suite: 'dsa-indexer',
    cases: [
      {
        name: 'decode_b1_L131072_indexer',
        params: { mode: 'decode', stage: 'indexer', b: 1, L: 131072 },
        ours: { ms: 0.01, gbps: 2400, hbmFraction: 0.8, instance: 'dsa_indexer_decode' },
        baselines: { 'torch-bf16': { ms: 0.1, gbps: 240 }, 'hbm-read': { ms: 1.4, gbps: 3000 } },
        valid: true,
      },
      {
        name: 'prefill_s4096_L32768_indexer',
        params: { mode: 'prefill', stage: 'indexer', b: 1, L: 32768 },
        ours: { ms: 2, tflops: 900, gbps: 300, instance: 'dsa_indexer_prefill' },
        baselines: { 'torch-bf16': { ms: 6, tflops: 300, gbps: 100 }, 'torch-fp8-rowwise': { error: 'RuntimeError: x' } },
        valid: true,
      },
    ],
  };

  it('lists TFLOP/s against the best baseline in TFLOP/s, and the HBM fraction', () => {
    expect(formatOtherFigures(mixed)).toBe(
      [
        '| case | ours TFLOP/s | best baseline TFLOP/s | ours / best | ours / HBM read bandwidth |',
        '|---|---:|---:|---:|---:|',
        '| decode_b1_L131072_indexer | – | – | – | 80.0% |',
        '| prefill_s4096_L32768_indexer | 900 | 300 (torch-bf16) | 3.00× (torch-bf16) | – |',
      ].join('\n'),
    );
    expect(formatBenchMarkdown(mixed)).toContain('Other figures: TFLOP/s where the table shows GB/s');
    expect(formatBenchMarkdown(mixed)).toContain('| decode_b1_L131072_indexer | 2400 | 240 | 3000 | – | 0.80× (hbm-read) | yes |');
  });

  it('is absent where the table shows everything (a TFLOP/s suite without HBM fractions)', () => {
    expect(formatOtherFigures(sample)).toBeUndefined();
    expect(formatBenchMarkdown(sample)).not.toContain('Other figures');
  });
});

describe("timed cases (a TFLOP/s suite with cases that have no FLOP figure, as dsa's decode step)", () => {
  const withStep: BenchSuiteResult = {
    ...sample,
    suite: 'dsa',
    cases: [
      ...sample.cases,
      {
        name: 'step_b1_sq1_L131072_topk2048_h128',
        params: { mode: 'step', b: 1 },
        ours: { ms: 0.035, instance: 'indexer → topk → decode' },
        baselines: { 'torch-gather': { ms: 0.49 }, 'torch-gather-graph': { ms: 0.21 }, 'torch-x': { error: 'RuntimeError: x' } },
        valid: true,
      },
      {
        name: 'step_b32_sq1_L131072_topk2048_h128',
        params: { mode: 'step', b: 32 },
        ours: { ms: 0.27, instance: 'indexer → topk → decode' },
        baselines: { 'torch-gather': { ms: 3.9 } },
        valid: false,
      },
    ],
  };

  it('lists their times (µs below a millisecond) and our speed-up over the fastest baseline that ran', () => {
    expect(formatTimedCases(withStep)).toBe(
      [
        '| case | ours | torch-gather | torch-gather-graph | torch-x | ours faster by | valid |',
        '|---|---:|---:|---:|---:|---:|---:|',
        '| step_b1_sq1_L131072_topk2048_h128 | 35.0 µs | 490.0 µs | 210.0 µs | error | 6.00× (torch-gather-graph) | yes |',
        '| step_b32_sq1_L131072_topk2048_h128 | 270.0 µs | 3.90 ms | – | – | INVALID | **no** |',
      ].join('\n'),
    );
    expect(formatBenchMarkdown(withStep)).toContain('Cases timed, not counted');
    expect(formatTimedCases(sample)).toBeUndefined();
  });
});

describe('SVG chart', () => {
  const svg = renderBenchSvg(sample);

  it('is deterministic and well formed', () => {
    expect(renderBenchSvg(sample)).toBe(svg);
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg.trim().endsWith('</svg>')).toBe(true);
  });

  it('draws no bar for an invalid result of ours', () => {
    expect(svg).toContain('b1_h48_s8192_d512_fp16 (INVALID)');
    expect(svg).toContain('>invalid<');
  });

  it('scales bars to the largest value', () => {
    const widths = [...svg.matchAll(/<rect x="260" y="\d+" width="(\d+)"/g)].map((m) => Number(m[1]));
    expect(Math.max(...widths)).toBe(520);
  });
});
