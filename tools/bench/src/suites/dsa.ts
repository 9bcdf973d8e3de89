// The dsa benchmark suite (issue 21): kernels/dsa's sparse MLA prefill and FP8-cache decode beside torch's
// gather-based sparse attention (and, for the decode, dense SDPA at the same context) in the same run. The
// reference server draws every input on the device (REFERENCE_OPS.md
// dsa_sparse_mla_prefill: bf16 q and kv at realistic magnitudes, each query's index row 2048 distinct random
// tokens) and writes them; ours uploads the same bytes, times back-to-back launches and writes out and lse for
// the server's check against its fp32 reference. Our own check goes further: on a sample of queries (every
// head) out, lse and max_logits must lie within the kernel's per-element error bound of the float64 CPU
// reference (dsaMlaSample.ts; the decode's over the dequantized cache). The whole decode step: dsaStepRun.ts.
import {
  checkDsaSparseMlaDecodeConfig,
  checkDsaSparseMlaPrefillConfig,
  DSA_MLA_PAGE_BYTES,
  DSA_MLA_PAGE_TOKENS,
  DSA_SPARSE_MLA_QK_DIM,
  DSA_SPARSE_MLA_SM_SCALE,
  DSA_SPARSE_MLA_V_DIM,
  DsaKernel,
  dsaSparseMlaDecodeSplit,
  dsaSparseMlaDecodeWorkspaceBytes,
  packDsaSparseMlaDecode,
  packDsaSparseMlaPrefill,
  type DsaPackedLaunch,
} from '@tilekit/kernel-dsa';
import { buildOncePerInstance, Device, NvccCompiler, type DeviceBuffer, type LoadableInstance } from '@tilekit/runtime';
import type { BenchSuite, CaseContext, OurCaseResult, SuiteCase } from '../benchSuite.ts';
import { measureLaunches } from '../timing/measureLaunches.ts';
import { DSA_BENCH_CASES, dsaMlaFlops, dsaMlaSpecOf, type DsaMlaDecodeBenchSpec, type DsaMlaPrefillBenchSpec } from './dsaCases.ts';
import {
  dsaMlaDecodeSampleCheck,
  dsaMlaSampleCheck,
  type DsaMlaDecodeHost,
  type DsaMlaPrefillHost,
  type DsaMlaPrefillOutputs,
} from './dsaMlaSample.ts';
import { dsaMeasurement } from './dsaMeasurement.ts';
import { runDsaStep } from './dsaStepRun.ts';
import { dsaStepSpecOf } from './dsaStepCases.ts';
import { readCaseInput } from './readCaseInput.ts';
import { typedView } from './typedView.ts';
import { withHeldBuffersAsync } from './withHeldBuffers.ts';

/** What the suite holds on the device (opened on the first runOurs). */
interface DsaGpu {
  readonly device: Device;
  readonly compiler: NvccCompiler;
  readonly kernel: ((i: LoadableInstance) => Promise<DsaKernel<LoadableInstance>>) & {
    builds(): Promise<DsaKernel<LoadableInstance>>[];
  };
}

function openGpu(): DsaGpu {
  const device = Device.open(0);
  const compiler = new NvccCompiler();
  return { device, compiler, kernel: buildOncePerInstance((i: LoadableInstance) => DsaKernel.build(i, { device, compiler })) };
}

/** Reads a prefill case's inputs (REFERENCE_OPS.md dsa_sparse_mla_prefill), checked against the spec. */
export function readDsaMlaPrefillHost(ctx: CaseContext, spec: DsaMlaPrefillBenchSpec): DsaMlaPrefillHost {
  const { sQ, hQ, L, topk } = spec;
  return {
    sQ,
    hQ,
    sKv: L,
    topk,
    smScale: DSA_SPARSE_MLA_SM_SCALE,
    q: typedView(readCaseInput(ctx, 'q', 'bf16', [sQ, hQ, DSA_SPARSE_MLA_QK_DIM]), Uint16Array),
    kv: typedView(readCaseInput(ctx, 'kv', 'bf16', [L, DSA_SPARSE_MLA_QK_DIM]), Uint16Array),
    indices: typedView(readCaseInput(ctx, 'indices', 'int32', [sQ, topk]), Int32Array),
  };
}

/**
 * Our outputs written for the server's check (`out` bf16 [s_q, h_q, 512], `lse` fp32 [s_q, h_q]) and our
 * sampled check against the CPU reference; what runOurs returns beside the timing.
 */
export function dsaMlaResult(ctx: CaseContext, host: DsaMlaPrefillHost, got: DsaMlaPrefillOutputs): Omit<OurCaseResult, 'ours'> {
  const outputs = {
    out: ctx.writeTensor('out', 'bf16', [host.sQ, host.hQ, DSA_SPARSE_MLA_V_DIM], got.out),
    lse: ctx.writeTensor('lse', 'fp32', [host.sQ, host.hQ], got.lse),
  };
  return { outputs, checks: { 'sampled queries': dsaMlaSampleCheck(host, got) } };
}

async function runPrefill(gpu: DsaGpu, spec: DsaMlaPrefillBenchSpec, ctx: CaseContext): Promise<OurCaseResult> {
  const { device } = gpu;
  const host = readDsaMlaPrefillHost(ctx, spec);
  const rows = spec.sQ * spec.hQ;
  return withHeldBuffersAsync(device, async (hold) => {
    const up = (view: ArrayBufferView): DeviceBuffer => hold(device.upload(view));
    // 0xa5 bytes: a value the kernel never writes is neither 0 nor finite-looking garbage that passes.
    const alloc = (bytes: number, what: string): DeviceBuffer => hold(device.alloc(bytes, what).fill(0xa5));
    const buffers = {
      q: up(host.q),
      kv: up(host.kv),
      indices: up(host.indices),
      out: alloc(rows * DSA_SPARSE_MLA_V_DIM * 2, 'dsa mla out'),
      maxLogits: alloc(rows * 4, 'dsa mla max_logits'),
      lse: alloc(rows * 4, 'dsa mla lse'),
    };
    const config = checkDsaSparseMlaPrefillConfig({
      ...{ sQ: spec.sQ, hQ: spec.hQ, sKv: spec.L, topk: spec.topk },
      ...{ dQk: DSA_SPARSE_MLA_QK_DIM, dV: DSA_SPARSE_MLA_V_DIM, smScale: host.smScale, hasSink: false, hasTopkLength: false },
    });
    const packed = packDsaSparseMlaPrefill(config, buffers);
    const kernel = await gpu.kernel(packed.instance);
    const timing = measureLaunches(device, () => kernel.launch(packed), ctx.timing);
    device.synchronize();
    const got = {
      out: buffers.out.copyToHost(new Uint16Array(rows * DSA_SPARSE_MLA_V_DIM)),
      lse: buffers.lse.copyToHost(new Float32Array(rows)),
      maxLogits: buffers.maxLogits.copyToHost(new Float32Array(rows)),
    };
    const r = kernel.compiled.resources;
    const note = `${packed.instance.name}: ${r.registers} registers, ${r.spillStores + r.spillLoads} B spills; grid ${packed.grid.join('x')}`;
    const valid = validEntries(host);
    return { ours: dsaMeasurement(timing, packed.instance.name, dsaMlaFlops(valid, spec.hQ)), ...dsaMlaResult(ctx, host, got), note };
  });
}

/** Reads a decode case's inputs (REFERENCE_OPS.md dsa_sparse_mla_decode), checked against the spec. */
export function readDsaMlaDecodeHost(ctx: CaseContext, spec: DsaMlaDecodeBenchSpec): DsaMlaDecodeHost {
  const { b, sQ, hQ, L, topk } = spec;
  return {
    b,
    sQ,
    hQ,
    topk,
    smScale: DSA_SPARSE_MLA_SM_SCALE,
    q: typedView(readCaseInput(ctx, 'q', 'bf16', [b, sQ, hQ, DSA_SPARSE_MLA_QK_DIM]), Uint16Array),
    cache: readCaseInput(ctx, 'cache', 'uint8', [L / DSA_MLA_PAGE_TOKENS, DSA_MLA_PAGE_BYTES]),
    indices: typedView(readCaseInput(ctx, 'indices', 'int32', [b, sQ, topk]), Int32Array),
  };
}

/** Our decode outputs written for the server's check (out bf16 [b, s_q, h_q, 512], lse fp32 [b, h_q, s_q]) and our sampled check. */
export function dsaMlaDecodeResult(ctx: CaseContext, host: DsaMlaDecodeHost, got: DsaMlaPrefillOutputs): Omit<OurCaseResult, 'ours'> {
  const outputs = {
    out: ctx.writeTensor('out', 'bf16', [host.b, host.sQ, host.hQ, DSA_SPARSE_MLA_V_DIM], got.out),
    lse: ctx.writeTensor('lse', 'fp32', [host.b, host.hQ, host.sQ], got.lse),
  };
  return { outputs, checks: { 'sampled query rows': dsaMlaDecodeSampleCheck(host, got) } };
}

async function runDecode(gpu: DsaGpu, spec: DsaMlaDecodeBenchSpec, ctx: CaseContext): Promise<OurCaseResult> {
  const { device } = gpu;
  const host = readDsaMlaDecodeHost(ctx, spec);
  const rows = spec.b * spec.sQ * spec.hQ;
  const config = checkDsaSparseMlaDecodeConfig({
    ...{ b: spec.b, sQ: spec.sQ, hQ: spec.hQ, topk: spec.topk, numPages: spec.L / DSA_MLA_PAGE_TOKENS },
    ...{ pageStrideBytes: DSA_MLA_PAGE_BYTES, smScale: host.smScale, hasSink: false, hasTopkLength: false },
  });
  const split = dsaSparseMlaDecodeSplit(config, device.smCount);
  return withHeldBuffersAsync(device, async (hold) => {
    const up = (view: ArrayBufferView): DeviceBuffer => hold(device.upload(view));
    const alloc = (bytes: number, what: string): DeviceBuffer => hold(device.alloc(Math.max(16, bytes), what).fill(0xa5));
    const workspace = dsaSparseMlaDecodeWorkspaceBytes(config, split.splits);
    const buffers = {
      q: up(host.q),
      cache: up(host.cache),
      indices: up(host.indices),
      out: alloc(rows * DSA_SPARSE_MLA_V_DIM * 2, 'dsa mla decode out'),
      lse: alloc(rows * 4, 'dsa mla decode lse'),
      maxLogits: alloc(rows * 4, 'dsa mla decode max_logits'),
      workspace: workspace === 0 ? undefined : alloc(workspace, 'dsa mla decode split partials'),
    };
    const packed = packDsaSparseMlaDecode(config, buffers, { smCount: device.smCount });
    const launches: DsaPackedLaunch<LoadableInstance>[] = [packed.decode, ...(packed.combine === undefined ? [] : [packed.combine])];
    const kernels = await Promise.all(launches.map((l) => gpu.kernel(l.instance)));
    const timing = measureLaunches(device, () => launches.forEach((l, i) => kernels[i]!.launch(l)), ctx.timing);
    device.synchronize();
    const got = {
      out: buffers.out.copyToHost(new Uint16Array(rows * DSA_SPARSE_MLA_V_DIM)),
      lse: buffers.lse.copyToHost(new Float32Array(rows)),
      maxLogits: buffers.maxLogits.copyToHost(new Float32Array(rows)),
    };
    const names = launches.map((l) => l.instance.name).join(' + ');
    const r = kernels[0]!.compiled.resources;
    const grid = `grid ${packed.decode.grid.join('x')} (${packed.splits} split(s) of ${packed.tilesPerSplit} tiles)`;
    const note = `${names}: ${r.registers} registers, ${r.spillStores + r.spillLoads} B spills; ${grid}`;
    const valid = validEntries({ indices: host.indices, sKv: spec.L });
    return { ours: dsaMeasurement(timing, names, dsaMlaFlops(valid, spec.hQ)), ...dsaMlaDecodeResult(ctx, host, got), note };
  });
}

/** Index entries in [0, sKv) (FlashMLA's Σvalid; every entry of the drawn inputs). */
export function validEntries(host: Pick<DsaMlaPrefillHost, 'indices' | 'sKv'>): number {
  let n = 0;
  for (const token of host.indices) if (token >= 0 && token < host.sKv) n++;
  return n;
}

async function runCase(gpu: DsaGpu, c: SuiteCase, ctx: CaseContext): Promise<OurCaseResult> {
  if (c.params['mode'] === 'step') return runDsaStep(gpu.device, gpu.compiler, dsaStepSpecOf(c), ctx);
  const spec = dsaMlaSpecOf(c);
  return spec.mode === 'prefill' ? runPrefill(gpu, spec, ctx) : runDecode(gpu, spec, ctx);
}

/** A `BenchSuite` for `runSuite` over `cases` (default every case); the device (0) is opened on the first runOurs. */
export function dsaSuite(cases: readonly SuiteCase[] = DSA_BENCH_CASES): BenchSuite {
  let gpu: DsaGpu | undefined;
  return {
    name: 'dsa',
    cases,
    async runOurs(c: SuiteCase, ctx: CaseContext): Promise<OurCaseResult> {
      gpu ??= openGpu();
      const result = await runCase(gpu, c, ctx);
      for (const [name, check] of Object.entries(result.checks ?? {}))
        ctx.log(`  ${c.name} ${name}: ${check.ok ? 'ok' : 'FAIL'} ${check.detail}`);
      return result;
    },
    dispose(): void {
      if (gpu === undefined) return;
      gpu.device.synchronize();
      for (const k of gpu.kernel.builds()) void k.then((kernel) => kernel.dispose());
    },
  };
}
