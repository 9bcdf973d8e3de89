// The fmha-bwd benchmark suite: tilekit's sm_90a attention backward (dot_do_o + dq_dk_dv +
// convert_dq through the operator's runner and the unified workspace) on the inputs the torch
// reference server drew for the case (REFERENCE_OPS.md's `attention_bwd`: q, k, v, do as bhsd
// files, varlen as (Σs, h, d)), uploaded as they are: the problem reads them in their own strides
// (bhsd, or group mode's bshd). O and LSE come from our forward (kernel-fmha-fwd) on the same
// inputs, untimed; the timing (timing/measureLaunches) covers every kernel of the backward. dQ, dK
// and dV go back to the harness as files in q's, k's and v's layout and dtype, where the server
// measures their error against the fp32 autograd reference.
import { causalBottomRight, noMask, seqstartsOf } from '@tilekit/fmha';
import { checkFmhaBwdProblem, FmhaBwdRunner, type CheckedFmhaBwdProblem } from '@tilekit/kernel-fmha-bwd';
import { FmhaFwdRunner, type FmhaFwdProblem } from '@tilekit/kernel-fmha-fwd';
import { buildFmhaBwdKernelsOnce } from '@tilekit/fmha-launch';
import { Device, NvccCompiler, type Compiler } from '@tilekit/runtime';
import type { BenchSuite, CaseContext, OurCaseResult, SuiteCase } from '../benchSuite.ts';
import { attentionKernelLayout } from './attentionFileLayout.ts';
import { attentionBwdBenchNote, runAttentionBwdBenchCase } from './attentionBwdBenchRun.ts';
import {
  FMHA_BWD_BENCH_CASES,
  fmhaBwdFileLayout,
  fmhaBwdTensorFiles,
  type FmhaBwdBenchCase,
  type FmhaBwdBenchShape,
} from './fmhaBwdCases.ts';

/** The operator problem of a shape: its files' layout (bhsd, or bshd in group mode for varlen), bottom-right causal (= top-left where sq = sk). */
export function fmhaBwdBenchProblem(s: FmhaBwdBenchShape): CheckedFmhaBwdProblem {
  const layout = attentionKernelLayout(fmhaBwdFileLayout(s));
  const common = {
    dtype: s.dtype,
    batch: s.b,
    nheadQ: s.h,
    hdimQ: s.d,
    mask: s.causal ? causalBottomRight : noMask,
    deterministic: s.deterministic,
    inputLayout: layout,
    outputLayout: layout,
  } as const;
  if (s.seqlens !== undefined)
    return checkFmhaBwdProblem({ ...common, seqstartQ: seqstartsOf(s.seqlens), seqstartK: seqstartsOf(s.seqlens) });
  return checkFmhaBwdProblem({ ...common, seqlenQ: s.s!, seqlenK: s.s! });
}

/** The forward that gives a backward its O and LSE: the same shapes, sequences, layouts, mask and scale, with LSE. */
export function fmhaBwdForwardProblem(p: CheckedFmhaBwdProblem): FmhaFwdProblem {
  const sequences = p.mode === 'group' ? { seqstartQ: p.seqstartQ, seqstartK: p.seqstartK } : { seqlenQ: p.seqlenQ, seqlenK: p.seqlenK };
  return {
    dtype: p.dtype,
    batch: p.batch,
    nheadQ: p.nheadQ,
    nheadK: p.nheadK,
    hdimQ: p.hdimQ,
    hdimV: p.hdimV,
    ...sequences,
    inputLayout: p.inputLayout,
    outputLayout: p.outputLayout,
    mask: p.mask,
    scale: p.scale,
    lse: true,
  };
}

/** `<problem>; workspace W B; O, LSE from <forward> (untimed); <kernel>: R registers, S B dynamic smem, X B spills; …` */
export function fmhaBwdNote(runner: FmhaBwdRunner, fwd: FmhaFwdRunner): string {
  return attentionBwdBenchNote(runner, fwd.instances.map((i) => i.name).join('+'));
}

/** Runs our forward for O and LSE (untimed), then runs and times the backward and writes dQ, dK, dV. */
function runBwdCase(device: Device, fwd: FmhaFwdRunner, runner: FmhaBwdRunner, c: FmhaBwdBenchCase, ctx: CaseContext): OurCaseResult {
  const forward = { names: fwd.instances.map((i) => i.name).join('+'), run: (b: Parameters<FmhaFwdRunner['run']>[0]) => fwd.run(b) };
  return runAttentionBwdBenchCase(device, forward, runner, fmhaBwdTensorFiles(c.shape), ctx);
}

/** A `BenchSuite` for `runSuite` over `cases` on device 0. */
export function fmhaBwdSuite(cases: readonly FmhaBwdBenchCase[] = FMHA_BWD_BENCH_CASES): BenchSuite {
  const device = Device.open(0);
  const compiler: Compiler = new NvccCompiler();
  const built = buildFmhaBwdKernelsOnce({ device, compiler });
  const byName = new Map(cases.map((c) => [c.name, c]));
  return {
    name: 'fmha-bwd',
    cases,
    async runOurs(sc: SuiteCase, ctx: CaseContext): Promise<OurCaseResult> {
      const c = byName.get(sc.name)!;
      const p = fmhaBwdBenchProblem(c.shape);
      const fwd = await FmhaFwdRunner.create(fmhaBwdForwardProblem(p), { device, compiler });
      try {
        const runner = await FmhaBwdRunner.create(p, { device, compiler, buildKernel: built });
        try {
          return runBwdCase(device, fwd, runner, c, ctx);
        } finally {
          runner.dispose();
        }
      } finally {
        fwd.dispose();
      }
    },
    dispose(): void {
      for (const k of built.builds()) void k.then((kernel) => kernel.dispose());
    },
  };
}
