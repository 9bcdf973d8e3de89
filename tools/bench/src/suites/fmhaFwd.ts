// The fmha-fwd benchmark suite: tilekit's sm_90a attention forward (through the operator's runner:
// split-KV chosen by its heuristic, varlen through group mode) on the inputs the torch reference
// server drew for the case (REFERENCE_OPS.md's `attention_fwd`: q, k, v as bhsd files, varlen as
// (Σs, h, d)), uploaded as they are: the problem reads them in their own strides (bhsd, or group
// mode's bshd). Timed back to back (timing/measureLaunches, split + combine together); O goes back
// to the harness as a file in q's layout, where the server measures its error against the fp32
// reference.
import { causalBottomRight, noMask, seqstartsOf } from '@tilekit/fmha';
import {
  checkFmhaFwdProblem,
  FmhaFwdCombineKernel,
  FmhaFwdKernel,
  FmhaFwdRunner,
  fmhaFwdProblemFlops,
  formatFmhaFwdProblem,
  type CheckedFmhaFwdProblem,
  type FmhaFwdCombineInstance,
  type FmhaFwdInstance,
  type FmhaFwdProblem,
} from '@tilekit/kernel-fmha-fwd';
import { buildOncePerInstance, Device, NvccCompiler, type Compiler } from '@tilekit/runtime';
import type { BenchSuite, CaseContext, OurCaseResult, SuiteCase } from '../benchSuite.ts';
import { tflopsOf } from '../flops.ts';
import { measureLaunches } from '../timing/measureLaunches.ts';
import { attentionCaseBuffers } from './attentionCaseBuffers.ts';
import { attentionKernelLayout } from './attentionFileLayout.ts';
import {
  FMHA_FWD_BENCH_CASES,
  fmhaFwdFileLayout,
  fmhaFwdTensorFiles,
  type FmhaFwdBenchCase,
  type FmhaFwdBenchShape,
} from './fmhaFwdCases.ts';
import { kernelResourcesNote } from './kernelResourcesNote.ts';
import { uploadSeqstarts } from './uploadSeqstarts.ts';
import { withHeldBuffers } from './withHeldBuffers.ts';

/** The problem fields of a bench shape: its files' layout (bhsd, or bshd in group mode for varlen), bottom-right causal (= top-left where sq = sk). */
export function fmhaFwdBenchFields(s: FmhaFwdBenchShape): Omit<FmhaFwdProblem, 'splitKv' | 'scoreModifier'> {
  const layout = attentionKernelLayout(fmhaFwdFileLayout(s));
  const common = {
    dtype: s.dtype,
    batch: s.b,
    nheadQ: s.h,
    nheadK: s.hk,
    hdimQ: s.d,
    hdimV: s.dv,
    mask: s.causal ? causalBottomRight : noMask,
    inputLayout: layout,
    outputLayout: layout,
  } as const;
  if (s.seqlensQ !== undefined && s.seqlensK !== undefined)
    return { ...common, seqstartQ: seqstartsOf(s.seqlensQ), seqstartK: seqstartsOf(s.seqlensK) };
  return { ...common, seqlenQ: s.sq!, seqlenK: s.sk! };
}

/** The operator problem of a bench shape (`fmhaFwdBenchFields`) with split-KV 'auto'. */
export function fmhaFwdBenchProblem(s: FmhaFwdBenchShape): CheckedFmhaFwdProblem {
  return checkFmhaFwdProblem({ ...fmhaFwdBenchFields(s), splitKv: 'auto' });
}

/** `<problem>, N key splits + combine: <kernel>: R registers, S B dynamic smem, X B spills; …` */
export function fmhaFwdNote(runner: FmhaFwdRunner): string {
  const p = runner.problem;
  const splits = p.numSplits > 1 ? `, ${p.numSplits} key splits + combine` : '';
  const kernels = kernelResourcesNote(runner.resources);
  return `${formatFmhaFwdProblem(p)}${splits}; ${kernels}`;
}

/** Uploads q, k, v from the case's files, runs and times ours, writes O (0xff-filled first: an unwritten element is NaN). */
function runFwdCase(device: Device, runner: FmhaFwdRunner, c: FmhaFwdBenchCase, ctx: CaseContext): OurCaseResult {
  const p = runner.problem;
  const files = fmhaFwdTensorFiles(c.shape);
  return withHeldBuffers(device, (hold) => {
    const { q, k, v, o } = attentionCaseBuffers(device, ctx, files, hold);
    const run = runner.prepare({ q, k, v, o, ...uploadSeqstarts(device, p, hold) });
    const timing = measureLaunches(device, run.launch, ctx.timing);
    return {
      ours: { ...timing, tflops: tflopsOf(fmhaFwdProblemFlops(p), timing.ms), instance: runner.instances.map((i) => i.name).join('+') },
      outputs: { o: ctx.writeTensor('o', files.o.dtype, files.o.shape, o.copyToHost()) },
      note: fmhaFwdNote(runner),
    };
  });
}

/** A `BenchSuite` for `runSuite` over `cases` on device 0. */
export function fmhaFwdSuite(cases: readonly FmhaFwdBenchCase[] = FMHA_FWD_BENCH_CASES): BenchSuite {
  const device = Device.open(0);
  const compiler: Compiler = new NvccCompiler();
  const buildKernel = buildOncePerInstance((instance: FmhaFwdInstance) => FmhaFwdKernel.build(instance, { device, compiler }));
  const buildCombine = buildOncePerInstance((instance: FmhaFwdCombineInstance) =>
    FmhaFwdCombineKernel.build(instance, { device, compiler }),
  );
  const byName = new Map(cases.map((c) => [c.name, c]));
  return {
    name: 'fmha-fwd',
    cases,
    async runOurs(sc: SuiteCase, ctx: CaseContext): Promise<OurCaseResult> {
      const c = byName.get(sc.name)!;
      const runner = await FmhaFwdRunner.create(fmhaFwdBenchProblem(c.shape), { device, compiler, buildKernel, buildCombine });
      try {
        return runFwdCase(device, runner, c, ctx);
      } finally {
        runner.dispose();
      }
    },
    dispose(): void {
      for (const k of [...buildKernel.builds(), ...buildCombine.builds()]) void k.then((kernel) => kernel.dispose());
    },
  };
}
