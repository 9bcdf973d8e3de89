import { planSparge } from '@tilekit/kernel-sparge';
import { describe, expect, it } from 'vitest';
import { spargeProblemOf } from './sparge.ts';
import type { SpargeBenchSpec } from './spargeBenchCases.ts';
import { spargeCheckOptions, spargeKernelPvThresholds } from './spargeCheckOptions.ts';

const spec: SpargeBenchSpec = { b: 1, h: 2, s: 512, d: 128, topk: 0.5, causal: true, int8: false, pvMode: 'warp', pvThreshold: 8 };

describe('spargeCheckOptions', () => {
  it("describes the planned kernel: causality, its fp32 scale, PV mode, one threshold per head, the vote's constants", () => {
    const options = spargeCheckOptions(planSparge(spargeProblemOf(spec)));
    expect(options).toEqual({
      causal: true,
      scale: Math.fround(1 / Math.sqrt(128)),
      pv_mode: 'warp',
      pv_threshold: [8, 8],
      warp_rows: 16,
      always_computed_tail: 1,
      skipped_mass_in_denominator: false,
    });
    expect(JSON.parse(JSON.stringify(options))).toEqual(options);
  });

  it('per-head thresholds as the kernel reads them: fp32, with +∞ sent as the largest double (JSON has no ∞)', () => {
    expect(spargeKernelPvThresholds([8, 0.1, Infinity])).toEqual([8, Math.fround(0.1), Number.MAX_VALUE]);
    const plan = planSparge({ ...spargeProblemOf({ ...spec, pvMode: 'block' }), params: { topk: 0.5, pvThreshold: [Infinity, 3] } });
    const options = spargeCheckOptions(plan);
    expect(options.pv_mode).toBe('block');
    expect(options.causal).toBe(false);
    expect(JSON.parse(JSON.stringify(options)).pv_threshold).toEqual([Number.MAX_VALUE, 3]);
  });
});
