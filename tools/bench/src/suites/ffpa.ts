// The ffpa benchmark suite: tilekit's large-head-dim attention forward (the sm_90a pipeline with
// Q·Kᵀ streamed in head-dim chunks and O split across two warpgroups that share P:
// FMHA_FWD_LARGE_HEAD_CATALOG's shared-P instances, launched through the forward launcher; the
// operator's problem check and runner do not offer d above 256 yet) on the inputs the torch
// reference server drew for the case (attention_fwd: bhsd files, varlen (Σs, h, d)). Timed back to
// back (timing/measureLaunches); O goes back to the harness as a file in q's layout, where the server
// measures its error against the fp32 reference.
import { packedAttentionStrides } from '@tilekit/fmha';
import { FMHA_FWD_LARGE_HEAD_CATALOG, FmhaFwdKernel, type CheckedFmhaFwdProblem, type FmhaFwdInstance } from '@tilekit/kernel-fmha-fwd';
import { buildOncePerInstance, Device, encodeTensorMapTiled, NvccCompiler } from '@tilekit/runtime';
import type { BenchSuite, CaseContext, OurCaseResult, SuiteCase } from '../benchSuite.ts';
import { tflopsOf } from '../flops.ts';
import { measureLaunches } from '../timing/measureLaunches.ts';
import { attentionCaseBuffers } from './attentionCaseBuffers.ts';
import { attentionKernelLayout } from './attentionFileLayout.ts';
import { FFPA_BENCH_CASES, type FfpaBenchCase } from './ffpaCases.ts';
import { fmhaFwdBenchProblem } from './fmhaFwd.ts';
import { fmhaFwdFileLayout, fmhaFwdTensorFiles, type FmhaFwdBenchShape } from './fmhaFwdCases.ts';
import { uploadSeqstarts } from './uploadSeqstarts.ts';
import { withHeldBuffers } from './withHeldBuffers.ts';

/** The shared-P instance of the catalog for a shape (its dtype, head dims, mask kind). */
export function ffpaBenchInstance(s: FmhaFwdBenchShape): FmhaFwdInstance {
  const mask = s.causal ? 'window' : 'none';
  const found = FMHA_FWD_LARGE_HEAD_CATALOG.find(
    (i) =>
      i.policy.dtype === s.dtype &&
      i.policy.headDim === s.d &&
      i.policy.headDimV === s.dv &&
      i.policy.mask === mask &&
      i.policy.outputSplit?.tag === 'shareP',
  );
  if (found === undefined) throw new Error(`ffpa bench: no large-head instance for ${JSON.stringify(s)}`);
  return found;
}

/**
 * The launch problem of a shape: the fmha-fwd suite's problem of the same sequences, mask and
 * heads at d 128 (the operator's check stops at 256), with the shape's head dims, its files'
 * strides, scale 1/√d in fp32, one pass and no LSE.
 */
export function ffpaBenchProblem(s: FmhaFwdBenchShape): CheckedFmhaFwdProblem {
  const base = fmhaFwdBenchProblem({ ...s, d: 128, dv: 128 });
  const layout = attentionKernelLayout(fmhaFwdFileLayout(s));
  const strides = (heads: number, rows: number, hdim: number) => packedAttentionStrides(layout, heads, rows, hdim);
  return {
    ...base,
    hdimQ: s.d,
    hdimV: s.dv,
    qStrides: strides(base.nheadQ, base.rowsQ, s.d),
    kStrides: strides(base.nheadK, base.rowsK, s.d),
    vStrides: strides(base.nheadK, base.rowsK, s.dv),
    oStrides: strides(base.nheadQ, base.rowsQ, s.dv),
    scale: Math.fround(1 / Math.sqrt(s.d)),
    lse: false,
    numSplits: 1,
  };
}

function runFfpaCase(device: Device, kernel: FmhaFwdKernel, c: FfpaBenchCase, ctx: CaseContext): OurCaseResult {
  const p = ffpaBenchProblem(c.shape);
  const files = fmhaFwdTensorFiles(c.shape);
  return withHeldBuffers(device, (hold) => {
    const { q, k, v, o } = attentionCaseBuffers(device, ctx, files, hold);
    const run = kernel.prepare(p, { q, k, v, o, ...uploadSeqstarts(device, p, hold) }, (m) => encodeTensorMapTiled(device, m));
    const timing = measureLaunches(device, run.launch, ctx.timing);
    return {
      ours: { ...timing, tflops: tflopsOf(c.flops, timing.ms), instance: kernel.instance.name },
      outputs: { o: ctx.writeTensor('o', files.o.dtype, files.o.shape, o.copyToHost()) },
      note: `${kernel.instance.name}: ${kernel.instance.threads} threads, ${kernel.instance.sharedBytes} B dynamic smem`,
    };
  });
}

/** A `BenchSuite` for `runSuite` over `cases` on device 0. */
export function ffpaSuite(cases: readonly FfpaBenchCase[] = FFPA_BENCH_CASES): BenchSuite {
  const device = Device.open(0);
  const compiler = new NvccCompiler();
  const build = buildOncePerInstance((instance: FmhaFwdInstance) => FmhaFwdKernel.build(instance, { device, compiler }));
  const byName = new Map(cases.map((c) => [c.name, c]));
  return {
    name: 'ffpa',
    cases,
    async runOurs(sc: SuiteCase, ctx: CaseContext): Promise<OurCaseResult> {
      const c = byName.get(sc.name)!;
      return runFfpaCase(device, await build(ffpaBenchInstance(c.shape)), c, ctx);
    },
    dispose(): void {
      for (const k of build.builds()) void k.then((kernel) => kernel.dispose());
    },
  };
}
