// The ffpa benchmark suite: tilekit's FFPA operator (@tilekit/kernel-ffpa: Q·Kᵀ streamed in
// head-dim chunks, O split across two warpgroups that share P, and above 512 columns across CTAs),
// run through its runner on the inputs the torch reference server drew for the case (attention_fwd:
// bhsd files, varlen (Σs, h, d)). Timed back to back (timing/measureLaunches, every slice's launch
// included); O goes back to the harness as a file in q's layout, where the server measures its
// error against the fp32 reference. Backward cases (ffpaBwdCases.ts) run FfpaBwdRunner after our
// forward gave them O and LSE (untimed), and return dQ, dK and dV (attention_bwd).
import { buildFmhaBwdKernelsOnce, type FmhaBwdKernelMemo } from '@tilekit/fmha-launch';
import {
  buildFfpaKernel,
  checkFfpaProblem,
  FfpaBwdRunner,
  FfpaRunner,
  type FfpaBwdPath,
  type FfpaInstance,
  type FfpaKernel,
  type FfpaProblem,
} from '@tilekit/kernel-ffpa';
import { formatFmhaFwdProblem, type CheckedFmhaFwdProblem } from '@tilekit/kernel-fmha-fwd';
import { buildOncePerInstance, Device, NvccCompiler } from '@tilekit/runtime';
import type { BenchSuite, CaseContext, OurCaseResult, SuiteCase } from '../benchSuite.ts';
import { tflopsOf } from '../flops.ts';
import { measureLaunches } from '../timing/measureLaunches.ts';
import { attentionCaseBuffers } from './attentionCaseBuffers.ts';
import { runAttentionBwdBenchCase } from './attentionBwdBenchRun.ts';
import { FFPA_BWD_BENCH_CASES } from './ffpaBwdCases.ts';
import { FFPA_BENCH_CASES, type FfpaBenchCase } from './ffpaCases.ts';
import { fmhaBwdBenchProblem, fmhaBwdForwardProblem } from './fmhaBwd.ts';
import { fmhaBwdTensorFiles, type FmhaBwdBenchCase } from './fmhaBwdCases.ts';
import { fmhaFwdBenchFields } from './fmhaFwd.ts';
import { fmhaFwdTensorFiles, type FmhaFwdBenchShape } from './fmhaFwdCases.ts';
import { kernelResourcesNote } from './kernelResourcesNote.ts';
import { uploadSeqstarts } from './uploadSeqstarts.ts';
import { withHeldBuffers } from './withHeldBuffers.ts';

/** The FFPA problem of a bench shape: the fmha-fwd suite's fields (layouts, mask, sequences), one pass. */
export function ffpaBenchProblem(s: FmhaFwdBenchShape): CheckedFmhaFwdProblem {
  return checkFfpaProblem(fmhaFwdBenchFields(s));
}

/** `<problem>; <plan>; <kernel>: R registers, S B dynamic smem, X B spills; …` */
function ffpaNote(runner: FfpaRunner): string {
  return [formatFmhaFwdProblem(runner.problem), runner.plan.description, kernelResourcesNote(runner.resources)].join('; ');
}

function runFfpaCase(device: Device, runner: FfpaRunner, c: FfpaBenchCase, ctx: CaseContext): OurCaseResult {
  const files = fmhaFwdTensorFiles(c.shape);
  return withHeldBuffers(device, (hold) => {
    const { q, k, v, o } = attentionCaseBuffers(device, ctx, files, hold);
    const run = runner.prepare({ q, k, v, o, ...uploadSeqstarts(device, runner.problem, hold) });
    const timing = measureLaunches(device, run.launch, ctx.timing);
    return {
      ours: { ...timing, tflops: tflopsOf(c.flops, timing.ms), instance: runner.kernels.map((s) => s.kernel.instance.name).join('+') },
      outputs: { o: ctx.writeTensor('o', files.o.dtype, files.o.shape, o.copyToHost()) },
      note: ffpaNote(runner),
    };
  });
}

/** The dq_dk_dv path of a backward case: its `path` param. */
function bwdPathOf(c: FmhaBwdBenchCase): FfpaBwdPath {
  const path = c.params['path'];
  if (path !== 'sm80' && path !== 'sm90') throw new Error(`${c.name}: params.path must be sm80 or sm90, not ${String(path)}`);
  return path;
}

/** A backward case: our FFPA forward for O and LSE (untimed), then FfpaBwdRunner timed on the case's path. */
async function runFfpaBwdCase(
  device: Device,
  kernels: { readonly compiler: NvccCompiler; readonly buildFwd: (i: FfpaInstance) => Promise<FfpaKernel>; readonly buildBwd: BwdBuilder },
  c: FmhaBwdBenchCase,
  ctx: CaseContext,
): Promise<OurCaseResult> {
  const p = fmhaBwdBenchProblem(c.shape);
  const fwd = await FfpaRunner.create(fmhaBwdForwardProblem(p) as FfpaProblem, {
    device,
    compiler: kernels.compiler,
    buildKernel: kernels.buildFwd,
  });
  try {
    const runner = await FfpaBwdRunner.create(p, { device, compiler: kernels.compiler, buildKernel: kernels.buildBwd, path: bwdPathOf(c) });
    try {
      const forward = {
        names: fwd.kernels.map((k) => k.kernel.instance.name).join('+'),
        run: (b: Parameters<FfpaRunner['run']>[0]) => fwd.run(b),
      };
      return runAttentionBwdBenchCase(device, forward, runner, fmhaBwdTensorFiles(c.shape), ctx);
    } finally {
      runner.dispose();
    }
  } finally {
    fwd.dispose();
  }
}

type BwdBuilder = FmhaBwdKernelMemo;

/** A `BenchSuite` for `runSuite` over `cases` on device 0. */
export function ffpaSuite(
  cases: readonly FfpaBenchCase[] = FFPA_BENCH_CASES,
  bwdCases: readonly FmhaBwdBenchCase[] = FFPA_BWD_BENCH_CASES,
): BenchSuite {
  const device = Device.open(0);
  const compiler = new NvccCompiler();
  const buildKernel = buildOncePerInstance((instance: FfpaInstance) => buildFfpaKernel(instance, { device, compiler }));
  const builtBwd = buildFmhaBwdKernelsOnce({ device, compiler });
  const bwd = { compiler, buildFwd: buildKernel, buildBwd: builtBwd };
  const byName = new Map(cases.map((c) => [c.name, c]));
  const bwdByName = new Map(bwdCases.map((c) => [c.name, c]));
  return {
    name: 'ffpa',
    cases: [...cases, ...bwdCases],
    async runOurs(sc: SuiteCase, ctx: CaseContext): Promise<OurCaseResult> {
      const b = bwdByName.get(sc.name);
      if (b !== undefined) return runFfpaBwdCase(device, bwd, b, ctx);
      const c = byName.get(sc.name)!;
      const plan = { path: c.path, ...(c.plan === 'slices' ? { clusters: false } : {}) };
      const runner = await FfpaRunner.create(ffpaBenchProblem(c.shape), { device, compiler, buildKernel, ...plan });
      try {
        return runFfpaCase(device, runner, c, ctx);
      } finally {
        runner.dispose();
      }
    },
    dispose(): void {
      for (const k of buildKernel.builds()) void k.then((kernel) => kernel.dispose());
      for (const k of builtBwd.builds()) void k.then((kernel) => kernel.dispose());
    },
  };
}
