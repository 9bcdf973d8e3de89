// The sparge benchmark suite (issue 16's harness): Sparge attention (@tilekit/kernel-sparge's runner:
// GPU block map, then the sparse vsa attention) on Sparge's locality inputs, written as files by
// writeInputs (spargeInputFiles.ts) so torch and ours read the same bytes. Headline = block map +
// attention enqueued together (what a user pays); attention alone (`ours-attention-only`) and our
// dense forward on the same inputs (`ours-dense`) are own baselines; torch's SDPA backends come from
// the reference server. Validation is central: we send our full O and, as aux, the block map the
// attention walked, the int8 cases' dequantized Q and K − km, and check options describing the kernel.
import {
  FmhaFwdCombineKernel,
  FmhaFwdKernel,
  FmhaFwdRunner,
  type FmhaFwdCombineInstance,
  type FmhaFwdInstance,
} from '@tilekit/kernel-fmha-fwd';
import {
  SpargeBlockMapKernels,
  SpargeRunner,
  type PreparedSparge,
  type SpargeBlockGrid,
  type SpargePlan,
  type SpargeProblem,
} from '@tilekit/kernel-sparge';
import { buildOncePerInstance, Device, NvccCompiler, type Compiler, type DeviceBuffer } from '@tilekit/runtime';
import type { BenchSuite, CaseContext, OurCaseResult, SuiteCase } from '../benchSuite.ts';
import type { TensorFile, TimingPlan } from '../referenceProtocol.ts';
import { measureLaunches } from '../timing/measureLaunches.ts';
import { fmhaFwdBenchProblem } from './fmhaFwd.ts';
import { SPARGE_BENCH_CASES, type SpargeBenchCase, type SpargeBenchSpec } from './spargeBenchCases.ts';
import { spargeCheckOptions } from './spargeCheckOptions.ts';
import { spargeDequantFp32 } from './spargeDequant.ts';
import { SPARGE_INPUT_NAMES, writeSpargeInputs } from './spargeInputFiles.ts';
import { spargeSlice, type SpargeSlice } from './spargeInputs.ts';
import { readbackSpargeInt8 } from './spargeInt8Readback.ts';
import { spargeOurMeasurement, spargeOwnBaselines, type SpargeTiming } from './spargeMeasurement.ts';
import { spargeMapDensity, spargeMapMismatches, spargeVisitedMap, type SpargeDeviceMaps } from './spargeVisitedMap.ts';

/** What the suite holds on the device (opened on the first runOurs: writeInputs needs no GPU). */
interface SpargeGpu {
  readonly device: Device;
  readonly compiler: Compiler;
  readonly sparge: SpargeRunner;
  readonly buildKernel: (i: FmhaFwdInstance) => Promise<FmhaFwdKernel>;
  readonly buildCombine: (i: FmhaFwdCombineInstance) => Promise<FmhaFwdCombineKernel>;
  /** The block-map kernels the int8 readback runs, per head dim, and those built (to dispose). */
  readonly blockMaps: Map<number, Promise<SpargeBlockMapKernels>>;
  readonly built: SpargeBlockMapKernels[];
}

function openGpu(): SpargeGpu {
  const device = Device.open(0);
  const compiler: Compiler = new NvccCompiler();
  return {
    device,
    compiler,
    sparge: new SpargeRunner({ device, compiler }),
    buildKernel: buildOncePerInstance((i: FmhaFwdInstance) => FmhaFwdKernel.build(i, { device, compiler })),
    buildCombine: buildOncePerInstance((i: FmhaFwdCombineInstance) => FmhaFwdCombineKernel.build(i, { device, compiler })),
    blockMaps: new Map(),
    built: [],
  };
}

function blockMapKernels(gpu: SpargeGpu, d: number): Promise<SpargeBlockMapKernels> {
  let k = gpu.blockMaps.get(d);
  if (k === undefined) {
    k = SpargeBlockMapKernels.build({ device: gpu.device, compiler: gpu.compiler, headDims: [d] }).then((built) => {
      gpu.built.push(built);
      return built;
    });
    gpu.blockMaps.set(d, k);
  }
  return k;
}

/** Q, K, V on the device, uploaded from the case's files. */
type SpargeInputBuffers = Record<(typeof SPARGE_INPUT_NAMES)[number], DeviceBuffer>;

/** Uploads the input files byte for byte, after checking they are fp16 (b, h, s, d). */
function uploadInputs(device: Device, ctx: CaseContext, c: SpargeBenchSpec): SpargeInputBuffers {
  const shape = [c.b, c.h, c.s, c.d];
  const uploaded: DeviceBuffer[] = [];
  try {
    for (const name of SPARGE_INPUT_NAMES) {
      const file: TensorFile | undefined = ctx.inputs[name];
      if (file?.dtype !== 'fp16' || file.shape.join(',') !== shape.join(','))
        throw new Error(`sparge input ${name}: ${file?.dtype} [${file?.shape.join(', ')}], expected fp16 [${shape.join(', ')}]`);
      uploaded.push(device.upload(ctx.readInput(name)));
    }
  } catch (error) {
    for (const b of uploaded) b.dispose();
    throw error;
  }
  const [q, k, v] = uploaded as [DeviceBuffer, DeviceBuffer, DeviceBuffer];
  return { q, k, v };
}

/** The operator problem of a spec (self-attention fp16 bhsd, vsa, scale 1/√d). */
export function spargeProblemOf(c: SpargeBenchSpec): SpargeProblem {
  return {
    dtype: 'fp16',
    batch: c.b,
    nheadQ: c.h,
    hdimQ: c.d,
    seqlenQ: c.s,
    seqlenK: c.s,
    params: { topk: c.topk, isCausal: c.causal, int8: c.int8, pvThreshold: c.pvThreshold },
    pvMode: c.pvMode,
  };
}

/** Our dense forward on the same device inputs, timed back to back. */
async function timeDense(
  gpu: SpargeGpu,
  c: SpargeBenchSpec,
  x: SpargeInputBuffers,
  plan: TimingPlan,
): Promise<{ timing: SpargeTiming; instance: string }> {
  const problem = fmhaFwdBenchProblem({ dtype: 'fp16', b: c.b, h: c.h, hk: c.h, d: c.d, dv: c.d, causal: c.causal, sq: c.s, sk: c.s });
  const { device, compiler, buildKernel, buildCombine } = gpu;
  const runner = await FmhaFwdRunner.create(problem, { device, compiler, buildKernel, buildCombine });
  const o = gpu.device.alloc(c.b * c.h * c.s * c.d * 2);
  try {
    const run = runner.prepare({ ...x, o });
    return { timing: measureLaunches(gpu.device, run.launch, plan), instance: runner.instances.map((i) => i.name).join('+') };
  } finally {
    gpu.device.synchronize();
    o.dispose();
    runner.dispose();
  }
}

/** What one Sparge run left: its timings, O (fp16 bytes), the maps of its last block-map launch, P·V counts of one launch. */
interface SparseRun {
  readonly plan: SpargePlan;
  readonly headline: SpargeTiming;
  readonly attention: SpargeTiming;
  readonly o: Uint8Array;
  readonly maps: SpargeDeviceMaps;
  readonly pv: { readonly computed: number; readonly skipped: number };
}

/**
 * One launch (P·V counts of exactly one launch), then the headline (map + attention) and attention
 * alone timed back to back; O and the maps are read after the last attention launch, which walked the
 * map of the last block-map launch: the O and the map sent to the check belong together.
 */
function timeSparse(device: Device, run: PreparedSparge, plan: TimingPlan, o: DeviceBuffer): SparseRun {
  run.launch();
  device.synchronize();
  const pv = run.pvStats();
  const headline = measureLaunches(device, run.launch, plan);
  const attention = measureLaunches(device, run.launchAttention, plan);
  device.synchronize();
  return { plan: run.plan, headline, attention, o: o.copyToHost(), maps: run.readBlockMap(), pv };
}

async function runSparse(gpu: SpargeGpu, c: SpargeBenchSpec, x: SpargeInputBuffers, plan: TimingPlan): Promise<SparseRun> {
  const o = gpu.device.alloc(c.b * c.h * c.s * c.d * 2).fill(0xff);
  let run: PreparedSparge | undefined;
  try {
    run = await gpu.sparge.prepare(spargeProblemOf(c), { ...x, o });
    return timeSparse(gpu.device, run, plan, o);
  } finally {
    gpu.device.synchronize();
    run?.dispose();
    o.dispose();
  }
}

function gridOf(plan: SpargePlan): SpargeBlockGrid {
  const p = plan.attention;
  return { batch: p.batch, nhead: p.nheadQ, qBlocks: p.qBlocks, kBlocks: p.kBlocks };
}

/** int8 cases: q_dequant / k_dequant from the GPU's own int8 (readbackSpargeInt8), and whether that re-run's LUT is the runner's. */
async function int8Aux(
  gpu: SpargeGpu,
  c: SpargeBenchSpec,
  run: SparseRun,
  x: SpargeInputBuffers,
  ctx: CaseContext,
): Promise<{ aux: Record<string, TensorFile>; sameLut: boolean }> {
  const kernels = await blockMapKernels(gpu, c.d);
  const back = readbackSpargeInt8(gpu.device, kernels, run.plan, spargeProblemOf(c).params, x);
  const shape = { batch: c.b, heads: c.h, seqlen: c.s, headDim: c.d };
  const sameLut = spargeMapMismatches(back.lut, run.maps.lut) + spargeMapMismatches(back.validBlockNum, run.maps.validBlockNum) === 0;
  const dims = [c.b, c.h, c.s, c.d];
  const aux = {
    q_dequant: ctx.writeTensor('q_dequant', 'fp32', dims, spargeDequantFp32(back.q, { ...shape, blockSize: run.plan.params.blockQ })),
    k_dequant: ctx.writeTensor('k_dequant', 'fp32', dims, spargeDequantFp32(back.k, { ...shape, blockSize: run.plan.params.blockK })),
  };
  return { aux, sameLut };
}

/** The case's record: outputs and aux written, check options, our measurement and baselines, the note. */
async function caseResult(
  gpu: SpargeGpu,
  bc: SpargeBenchCase,
  run: SparseRun,
  dense: { timing: SpargeTiming; instance: string },
  x: SpargeInputBuffers,
  ctx: CaseContext,
): Promise<OurCaseResult> {
  const c = bc.spec;
  const grid = gridOf(run.plan);
  const visited = spargeVisitedMap(run.plan.attention.pipeline, grid, run.maps);
  const mapMismatches = spargeMapMismatches(visited, run.maps.map);
  const density = spargeMapDensity(visited, grid, {
    s: c.s,
    blockQ: run.plan.params.blockQ,
    blockK: run.plan.params.blockK,
    causal: c.causal,
  });
  const int8 = c.int8 ? await int8Aux(gpu, c, run, x, ctx) : undefined;
  const timings = { headline: run.headline, attention: run.attention, dense: dense.timing };
  const ours = spargeOurMeasurement(bc.flops, timings, {
    instance: `block map d${c.d} + ${run.plan.instance.name}`,
    denseInstance: dense.instance,
    density,
    pvComputed: run.pv.computed,
    pvSkipped: run.pv.skipped,
  });
  const note = [
    `headline = block map + attention ${ours.ms.toFixed(3)} ms; attention alone ` +
      `${ours.attentionMs.toFixed(3)} ms; our dense ${ours.denseMs.toFixed(3)} ms (` +
      `${dense.instance})`,
    `map density ${density.toFixed(4)} (sparsity ${ours.achievedSparsity.toFixed(4)}) of the ` +
      `${run.plan.attention.pipeline} walk sent to the check` +
      `${mapMismatches === 0 ? '' : `; ${mapMismatches} entries differ from the runner's one-hot map`}`,
    `P·V tiles per launch: ${run.pv.computed} computed, ${run.pv.skipped} skipped`,
    ...(int8 === undefined
      ? []
      : [`q/k dequant from the GPU's int8 (block-map stage re-run; its LUT ${int8.sameLut ? 'equals' : 'DIFFERS from'} the runner's)`]),
  ].join('; ');
  return {
    ours,
    outputs: { o: ctx.writeTensor('o', 'fp16', [c.b, c.h, c.s, c.d], run.o) },
    aux: { block_map: ctx.writeTensor('block_map', 'uint8', [grid.batch, grid.nhead, grid.qBlocks, grid.kBlocks], visited), ...int8?.aux },
    checkOptions: spargeCheckOptions(run.plan),
    baselines: spargeOwnBaselines(bc.flops, timings),
    note,
  };
}

/** A `BenchSuite` for `runSuite` over `cases`; the device (0) is opened on the first runOurs. */
export function spargeSuite(cases: readonly SpargeBenchCase[] = SPARGE_BENCH_CASES, log: (line: string) => void = console.log): BenchSuite {
  const byName = new Map(cases.map((c) => [c.name, c]));
  const caseOf = (sc: SuiteCase): SpargeBenchCase => {
    const c = byName.get(sc.name);
    if (c === undefined) throw new Error(`sparge suite: no case ${sc.name}`);
    return c;
  };
  let gpu: SpargeGpu | undefined;
  let slice: SpargeSlice | undefined;
  return {
    name: 'sparge',
    cases,
    writeInputs(sc, dir) {
      const c = caseOf(sc).spec;
      if (slice?.s !== c.s || slice.d !== c.d) {
        const started = Date.now();
        slice = spargeSlice(c.s, c.d);
        log(
          `  inputs s${c.s} d${c.d}: one slice drawn in ${((Date.now() - started) / 1000).toFixed(1)} s, rotated over ${c.b * c.h} heads`,
        );
      }
      return writeSpargeInputs(c, slice, dir);
    },
    async runOurs(sc, ctx) {
      const bc = caseOf(sc);
      gpu ??= openGpu();
      const x = uploadInputs(gpu.device, ctx, bc.spec);
      try {
        const run = await runSparse(gpu, bc.spec, x, ctx.timing);
        const dense = await timeDense(gpu, bc.spec, x, ctx.timing);
        const result = await caseResult(gpu, bc, run, dense, x, ctx);
        ctx.log(`  ${sc.name}: ${result.note}`);
        return result;
      } finally {
        gpu.device.synchronize();
        for (const b of Object.values(x)) b.dispose();
      }
    },
    dispose() {
      if (gpu === undefined) return;
      gpu.device.synchronize();
      for (const kernels of gpu.built) kernels.dispose();
    },
  };
}
