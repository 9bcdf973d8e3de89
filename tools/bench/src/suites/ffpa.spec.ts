import type { AttentionTensorStrides } from '@tilekit/fmha';
import { fmhaFwdOperandElements } from '@tilekit/kernel-fmha-fwd';
import { describe, expect, it } from 'vitest';
import { attentionFileBytes } from './attentionFileLayout.ts';
import { checkFfpaBwdProblem, ffpaBwdKernelSet, ffpaColumnSlices, planFfpa } from '@tilekit/kernel-ffpa';
import { FFPA_BWD_BENCH_CASES } from './ffpaBwdCases.ts';
import { fmhaBwdBenchProblem } from './fmhaBwd.ts';
import { ffpaBenchProblem } from './ffpa.ts';
import { FFPA_BENCH_CASES } from './ffpaCases.ts';
import { fmhaFwdTensorFiles } from './fmhaFwdCases.ts';

const used = (s: AttentionTensorStrides, group: boolean): Partial<AttentionTensorStrides> => (group ? { head: s.head, row: s.row } : s);

describe('ffpa bench suite, backward cases', () => {
  it('names, params and the problem: ffpa_bwd_b1_h32_s8192_d{320,512,768,1024}_bf16 on the sm_90a path, d{320,512,768,1024} _sm80, FFPA-checkable', () => {
    expect(FFPA_BWD_BENCH_CASES.map((c) => c.name)).toEqual([
      ...[320, 512, 768, 1024].map((d) => `ffpa_bwd_b1_h32_s8192_d${d}_bf16`),
      ...[320, 512, 768, 1024].map((d) => `ffpa_bwd_b1_h32_s8192_d${d}_bf16_sm80`),
    ]);
    for (const c of FFPA_BWD_BENCH_CASES) {
      const path = c.name.endsWith('_sm80') ? 'sm80' : 'sm90';
      expect(c.params).toMatchObject({ d: c.shape.d, dv: c.shape.d, hk: 32, causal: false, pass: 'bwd', path });
      expect(c.seed).toBe(FFPA_BWD_BENCH_CASES.find((x) => x.shape.d === c.shape.d)!.seed);
      expect(c.reference.op).toBe('attention_bwd');
      expect(c.errorBaselines).toEqual(['torch-efficient']);
      const p = checkFfpaBwdProblem(fmhaBwdBenchProblem(c.shape));
      expect([p.hdimQ, p.hdimV, p.seqlenQ, p.nheadK]).toEqual([c.shape.d, c.shape.d, 8192, 32]);
      expect(ffpaBwdKernelSet(p, { path }).dqDkDv.name).toMatch(new RegExp(`^ffpa_bwd_${path}_bf16_d${c.shape.d}_none_`));
    }
  });
});

describe('ffpa bench suite', () => {
  it('names, params and baselines: the issue’s record params, torch-efficient judging every case', () => {
    expect(FFPA_BENCH_CASES.map((c) => c.name)).toEqual([
      'ffpa_fwd_b1_h32_s8192_d320_bf16',
      'ffpa_fwd_b1_h32_s8192_d384_bf16',
      'ffpa_fwd_b1_h32_s8192_d448_bf16',
      'ffpa_fwd_b1_h32_s8192_d512_bf16',
      'ffpa_fwd_b1_h32_s8192_d640_bf16',
      'ffpa_fwd_b1_h32_s8192_d768_bf16',
      'ffpa_fwd_b1_h32_s8192_d896_bf16',
      'ffpa_fwd_b1_h32_s8192_d1024_bf16',
      'ffpa_fwd_b1_h32_s8192_d576_dv512_bf16',
      'ffpa_fwd_b1_h32_s8192_d512_causal_bf16',
      'ffpa_fwd_b1_h32_hk8_s8192_d512_bf16',
      'ffpa_fwd_b1_h32_s16384_d512_bf16',
      'ffpa_fwd_varlen8_h32_d512_bf16',
      'ffpa_fwd_b1_h32_s8192_d640_bf16_slices',
      'ffpa_fwd_b1_h32_s8192_d768_bf16_slices',
      'ffpa_fwd_b1_h32_s8192_d320_bf16_sm80',
      'ffpa_fwd_b1_h32_s8192_d512_bf16_sm80',
      'ffpa_fwd_b1_h32_s8192_d1024_bf16_sm80',
    ]);
    for (const c of FFPA_BENCH_CASES) {
      expect(c.params).toMatchObject({
        d: c.shape.d,
        dv: c.shape.dv,
        causal: c.shape.causal,
        hk: c.shape.hk,
        pass: 'fwd',
        path: c.name.endsWith('_sm80') ? 'sm80' : 'sm90',
        plan: c.plan,
      });
      expect(c.errorBaselines[0]).toBe('torch-efficient');
    }
  });

  it(
    'every case plans (sm_90a: shared-P instances, a cluster at d 640 and 768, else slices of at most 512 columns; ' +
      'sm_80: slices of at most 256), and its problem reads the case’s files where they lie',
    () => {
      for (const c of FFPA_BENCH_CASES.filter((x) => x.path === 'sm90')) {
        const plan = planFfpa(ffpaBenchProblem(c.shape), c.plan === 'slices' ? { clusters: false } : {});
        // d = d_v 640 and 768 run as a cluster of two CTAs (one plan slice); above 512 otherwise column slices.
        const cluster = c.plan === 'auto' && [640, 768].includes(c.shape.dv);
        expect(plan.slices.map((s) => s.instance.clusterCtas)).toEqual(cluster ? [2] : Array(Math.ceil(c.shape.dv / 512)).fill(1));
        for (const s of plan.slices) expect(s.instance.policy.outputSplit?.tag).toBe('shareP');
      }
      for (const c of FFPA_BENCH_CASES.filter((x) => x.path === 'sm80')) {
        const plan = planFfpa(ffpaBenchProblem(c.shape), { path: 'sm80' });
        expect(plan.slices.map((s) => s.width)).toEqual(ffpaColumnSlices(c.shape.dv, 256).map((s) => s.width));
        for (const s of plan.slices) expect(s.instance.name).toMatch(/^ffpa_fwd_sm80_bf16_/);
      }
      for (const c of FFPA_BENCH_CASES) {
        const p = ffpaBenchProblem(c.shape);
        expect([p.hdimQ, p.hdimV, p.numSplits, p.lse]).toEqual([c.shape.d, c.shape.dv, 1, false]);
        expect(p.scale).toBe(Math.fround(1 / Math.sqrt(c.shape.d)));
        const files = fmhaFwdTensorFiles(c.shape);
        const elements = fmhaFwdOperandElements(p);
        const group = p.mode === 'group';
        for (const [strides, file, span] of [
          [p.qStrides, files.q, elements.q],
          [p.kStrides, files.k, elements.k],
          [p.vStrides, files.v, elements.v],
          [p.oStrides, files.o, elements.o],
        ] as const) {
          expect(used(strides, group)).toEqual(used(file.strides, group));
          expect(2 * span).toBe(attentionFileBytes(file));
        }
      }
    },
  );
});
