import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseBenchResult } from '../benchResult.ts';
import { SPARGE_BENCH_CASES } from './spargeBenchCases.ts';
import { spargeMeasurementOf, spargeOurMeasurement, spargeOwnBaselines, type SpargeTiming } from './spargeMeasurement.ts';

const timing = (ms: number): SpargeTiming => ({
  ms,
  msMin: ms * 0.99,
  msMax: ms * 1.01,
  reps: [ms * 0.99, ms, ms * 1.01],
  launchesPerRep: 10,
});
const extra = { instance: 'block map d128 + sparge_vsa', denseInstance: 'fmha_fwd', density: 0.25, pvComputed: 10, pvSkipped: 2 };

describe('sparge measurement', () => {
  it('the headline is map + attention: speedups are dense / ms, TFLOP/s dense-equivalent from the median', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0.01, max: 100, noNaN: true }),
        fc.double({ min: 0.001, max: 10, noNaN: true }),
        fc.double({ min: 0.01, max: 100, noNaN: true }),
        (attentionMs, mapMs, denseMs) => {
          const t = { headline: timing(attentionMs + mapMs), attention: timing(attentionMs), dense: timing(denseMs) };
          const m = spargeOurMeasurement(1e12, t, extra);
          expect(m.ms).toBe(attentionMs + mapMs);
          expect(m.speedupVsDense).toBeCloseTo(denseMs / (attentionMs + mapMs), 10);
          expect(m.attentionSpeedupVsDense).toBeGreaterThanOrEqual(m.speedupVsDense);
          expect(m.tflops! * m.ms).toBeCloseTo(1e3, 6);
          expect(m.achievedSparsity).toBe(0.75);
        },
      ),
    );
  });

  it('keeps the timing fields (and a flushed timing), not the re-run count', () => {
    const flushed = timing(0.05);
    expect(spargeMeasurementOf({ ...timing(0.04), flushed, reruns: 1 } as SpargeTiming, 4e9)).toEqual({
      ...timing(0.04),
      tflops: 4e9 / 0.04 / 1e9,
      flushed,
    });
  });

  it('a case with ours, its own baselines (attention only, dense) and a torch error passes the result format', () => {
    const c = SPARGE_BENCH_CASES[0]!;
    const t = { headline: timing(0.23), attention: timing(0.2), dense: timing(0.5) };
    const ours = spargeOurMeasurement(c.flops, t, extra);
    const baselines = { ...spargeOwnBaselines(c.flops, t), 'torch-flash': { error: 'No available kernel' } };
    expect(baselines['ours-attention-only'].ms).toBe(0.2);
    expect(baselines['ours-dense'].tflops).toBeCloseTo(c.flops / 0.5 / 1e9, 6);
    const result = {
      suite: 'sparge',
      device: 'NVIDIA H200',
      date: '2026-11-22',
      commit: 'abc',
      cases: [{ name: c.name, params: c.params, ours, baselines, valid: true, maxAbsErr: 1e-3 }],
    };
    expect(parseBenchResult(JSON.parse(JSON.stringify(result)))).toEqual(result);
  });
});
