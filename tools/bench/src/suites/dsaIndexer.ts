// The dsa-indexer benchmark suite (issue 20): kernels/dsa's paged decode indexer, exact top-k and both back
// to back, and its prefill indexer, beside torch in the same run. The reference server draws every input
// on the device (REFERENCE_OPS.md dsa_indexer_decode / dsa_indexer_prefill: e4m3 q and keys, the paged
// cache through a random block table, the topk stage's fp32 logits) and writes them; ours uploads the same
// bytes, times back-to-back launches and writes its outputs for the server's check (logits; the selected
// logits sorted, which torch.topk's are compared with, ties either way). Our own checks go further: every
// selection must equal dsaTopkReference's exactly, and a sample of the logits must lie within the kernel's
// per-element error bound of the CPU reference (dsaLogitsSample.ts).
import {
  checkDsaIndexerDecodeConfig,
  checkDsaIndexerPrefillConfig,
  checkDsaTopkConfig,
  DSA_INDEX_HEAD_DIM,
  DSA_PAGE_BYTES,
  DsaKernel,
  type DsaTopkKernel,
  packDsaIndexerDecode,
  packDsaIndexerPrefill,
  packDsaTopk,
  type DsaIndexerDecodeInstance,
  type DsaIndexerPrefillInstance,
  type DsaTopkAnyInstance,
} from '@tilekit/kernel-dsa';
import {
  buildOncePerInstance,
  Device,
  encodeTensorMapTiled,
  NvccCompiler,
  type Compiler,
  type DeviceBuffer,
  type KernelResources,
} from '@tilekit/runtime';
import type { OurMeasurement } from '../benchResult.ts';
import type { BenchSuite, CaseContext, OurCaseResult, OwnCheck, SuiteCase } from '../benchSuite.ts';
import type { TensorFile } from '../referenceProtocol.ts';
import { measureLaunches, type LaunchTiming } from '../timing/measureLaunches.ts';
import { caseInputPath, readFileChunks, readFileRange, writeOurTensorChunks, CASE_FILE_CHUNK_BYTES } from './dsaCaseFiles.ts';
import {
  DSA_INDEXER_BENCH_CASES,
  dsaBenchSpecOf,
  dsaDecodeBytesRead,
  dsaDecodeRows,
  dsaPagesOf,
  dsaPrefillBytesMoved,
  dsaPrefillFlops,
  dsaTopkBytesRead,
  hbmFractionOf,
  type DsaDecodeBenchSpec,
  type DsaPrefillBenchSpec,
} from './dsaIndexerCases.ts';
import {
  dsaDecodeLogitsCheck,
  dsaDecodeSample,
  dsaPrefillLogitsCheck,
  dsaPrefillSample,
  type DsaDecodeHost,
  type DsaPrefillHost,
} from './dsaLogitsSample.ts';
import { dsaSelectedValues, dsaTopkCheck } from './dsaTopkCheck.ts';
import { readCaseInput } from './readCaseInput.ts';
import { withHeldBuffersAsync } from './withHeldBuffers.ts';

/** What the suite holds on the device (opened on the first runOurs). */
interface DsaGpu {
  readonly device: Device;
  readonly decode: (i: DsaIndexerDecodeInstance) => Promise<DsaKernel<DsaIndexerDecodeInstance>>;
  readonly prefill: (i: DsaIndexerPrefillInstance) => Promise<DsaKernel<DsaIndexerPrefillInstance>>;
  readonly topk: ((i: DsaTopkAnyInstance) => Promise<DsaTopkKernel>) & { builds(): Promise<DsaTopkKernel>[] };
  readonly indexers: () => Promise<DsaKernel<DsaIndexerDecodeInstance> | DsaKernel<DsaIndexerPrefillInstance>>[];
}

function openGpu(): DsaGpu {
  const device = Device.open(0);
  const compiler: Compiler = new NvccCompiler();
  const decode = buildOncePerInstance((i: DsaIndexerDecodeInstance) => DsaKernel.build(i, { device, compiler }));
  const prefill = buildOncePerInstance((i: DsaIndexerPrefillInstance) => DsaKernel.build(i, { device, compiler }));
  const topk = buildOncePerInstance((i: DsaTopkAnyInstance) => DsaKernel.build(i, { device, compiler }));
  return { device, decode, prefill, topk, indexers: () => [...decode.builds(), ...prefill.builds()] };
}

const bytesOf = (view: ArrayBufferView): Uint8Array => new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
const float32Of = (bytes: Uint8Array): Float32Array =>
  new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
const int32Of = (bytes: Uint8Array): Int32Array =>
  new Int32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));

/** A timing as our Measurement, with GB/s of `bytes` (and TFLOP/s of `flops` when given). */
function measurementOf(t: LaunchTiming, instance: string, figures: { readonly bytes: number; readonly flops?: number }): OurMeasurement {
  const { ms, msMin, msMax, reps, launchesPerRep, reruns } = t;
  return {
    ms,
    msMin,
    msMax,
    reps,
    launchesPerRep,
    reruns,
    ...(t.flushed === undefined ? {} : { flushed: t.flushed }),
    ...(figures.flops === undefined ? {} : { tflops: figures.flops / ms / 1e9 }),
    gbps: figures.bytes / ms / 1e6,
    instance,
  };
}

function resourcesNote(name: string, r: KernelResources): string {
  return `${name}: ${r.registers} registers, ${r.sharedBytes} B static smem, ${r.spillStores + r.spillLoads} B spills`;
}

/** A decode case's inputs on the host: the small ones read, the cache left in its file (checked against its descriptor). */
export interface DecodeHostInputs {
  readonly host: DsaDecodeHost;
  readonly cachePath: string;
  readonly cacheBytes: number;
  readonly numPages: number;
}

/** Reads a decode case's small inputs (REFERENCE_OPS.md dsa_indexer_decode) and checks the cache file. */
export function readDecodeHost(ctx: CaseContext, spec: DsaDecodeBenchSpec): DecodeHostInputs {
  const rows = dsaDecodeRows(spec);
  const maxPages = dsaPagesOf(spec.L);
  const numPages = spec.b * maxPages + 1;
  const host: DsaDecodeHost = {
    B: spec.b,
    nextN: spec.nextN,
    H: spec.h,
    maxContext: spec.L,
    maxPages,
    q: new Uint8Array(readCaseInput(ctx, 'q', 'uint8', [spec.b, spec.nextN, spec.h, DSA_INDEX_HEAD_DIM])),
    weights: float32Of(readCaseInput(ctx, 'weights', 'fp32', [rows, spec.h])),
    blockTable: int32Of(readCaseInput(ctx, 'block_table', 'int32', [spec.b, maxPages])),
    contextLens: int32Of(readCaseInput(ctx, 'context_lens', 'int32', [spec.b])),
  };
  const cache = caseInputPath(ctx, 'cache', 'uint8', [numPages, DSA_PAGE_BYTES]);
  return { host, cachePath: cache.path, cacheBytes: cache.bytes, numPages };
}

/** A decode case's inputs on the host and on the device (the cache uploaded in chunks from its file). */
interface DecodeInputs extends DecodeHostInputs {
  readonly buffers: {
    readonly q: DeviceBuffer;
    readonly weights: DeviceBuffer;
    readonly cache: DeviceBuffer;
    readonly blockTable: DeviceBuffer;
    readonly contextLens: DeviceBuffer;
  };
}

function uploadDecodeInputs(
  device: Device,
  ctx: CaseContext,
  spec: DsaDecodeBenchSpec,
  hold: <B extends DeviceBuffer>(b: B) => B,
): DecodeInputs {
  const x = readDecodeHost(ctx, spec);
  const cache = hold(device.alloc(x.cacheBytes, 'dsa index cache'));
  readFileChunks(x.cachePath, x.cacheBytes, (chunk, offset) => cache.copyFromHost(chunk, { offset }));
  const buffers = {
    q: hold(device.upload(x.host.q)),
    weights: hold(device.upload(x.host.weights)),
    cache,
    blockTable: hold(device.upload(x.host.blockTable)),
    contextLens: hold(device.upload(x.host.contextLens)),
  };
  return { ...x, buffers };
}

/** The decode indexer's packed launch into `logits` ([rows][L] fp32, filled with NaN bytes first) and its kernel. */
async function prepareDecode(gpu: DsaGpu, spec: DsaDecodeBenchSpec, x: DecodeInputs, logits: DeviceBuffer) {
  const config = checkDsaIndexerDecodeConfig({
    batch: spec.b,
    nextN: spec.nextN,
    heads: spec.h,
    maxContext: spec.L,
    maxPages: x.host.maxPages,
    numPages: x.numPages,
  });
  const packed = packDsaIndexerDecode(config, { ...x.buffers, logits }, (m) => encodeTensorMapTiled(gpu.device, m), gpu.device.smCount);
  const kernel = await gpu.decode(packed.instance);
  const note = `${resourcesNote(packed.instance.name, kernel.compiled.resources)}; grid ${packed.grid.join('x')}, ${packed.pagesPerCta} pages per CTA`;
  return { launch: () => kernel.launch(packed), name: packed.instance.name, note };
}

/** The top-k's packed launch over [rows][L] logits into `out` and its kernel. */
async function prepareTopk(gpu: DsaGpu, rows: number, L: number, k: number, logits: DeviceBuffer, out: DeviceBuffer) {
  const packed = packDsaTopk(checkDsaTopkConfig({ rows, rowStride: L, k }), { logits, out });
  const kernel = await gpu.topk(packed.instance);
  return { launch: () => kernel.launch(packed), name: packed.instance.name, note: resourcesNote(packed.instance.name, kernel.resources) };
}

/** The decode logits' sampled check, reading the sampled pages from the cache file. */
export function decodeLogitsCheck(x: DecodeHostInputs, logits: Float32Array): OwnCheck {
  return dsaDecodeLogitsCheck(x.host, dsaDecodeSample(x.host), logits, (page) =>
    readFileRange(x.cachePath, page * DSA_PAGE_BYTES, DSA_PAGE_BYTES),
  );
}

async function runDecodeIndexer(gpu: DsaGpu, spec: DsaDecodeBenchSpec, ctx: CaseContext): Promise<OurCaseResult> {
  const { device } = gpu;
  const rows = dsaDecodeRows(spec);
  return withHeldBuffersAsync(device, async (hold) => {
    const x = uploadDecodeInputs(device, ctx, spec, hold);
    const logits = hold(device.alloc(rows * spec.L * 4, 'dsa logits').fill(0xff));
    const indexer = await prepareDecode(gpu, spec, x, logits);
    const timing = measureLaunches(device, indexer.launch, ctx.timing);
    const host = logits.copyToHost(new Float32Array(rows * spec.L));
    const ours = measurementOf(timing, indexer.name, { bytes: dsaDecodeBytesRead(spec) });
    const hbmFraction = hbmFractionOf(ours.gbps!, ctx.baselines);
    return {
      ours: hbmFraction === undefined ? ours : { ...ours, hbmFraction },
      outputs: { logits: ctx.writeTensor('logits', 'fp32', [rows, spec.L], host) },
      checks: { 'logits sample': decodeLogitsCheck(x, host) },
      note: hbmFraction === undefined ? `${indexer.note}; no hbm-read baseline ran: no hbmFraction` : indexer.note,
    };
  });
}

/** Selected values and the exact-selection check of a [rows][k] selection over host logits. */
export function selectionOutputs(ctx: CaseContext, logits: Float32Array, rows: number, L: number, k: number, selection: Int32Array) {
  const values: TensorFile = ctx.writeTensor('topk_values', 'fp32', [rows, k], dsaSelectedValues(logits, L, selection, k));
  return { values, check: dsaTopkCheck(logits, rows, L, k, selection) };
}

async function runDecodeTopk(gpu: DsaGpu, spec: DsaDecodeBenchSpec, ctx: CaseContext): Promise<OurCaseResult> {
  const { device } = gpu;
  const rows = dsaDecodeRows(spec);
  const logitsHost = float32Of(readCaseInput(ctx, 'logits', 'fp32', [rows, spec.L]));
  return withHeldBuffersAsync(device, async (hold) => {
    const logits = hold(device.upload(logitsHost));
    // 0xa5 bytes: neither a position nor −1, so a slot the kernel never writes fails the exact check.
    const out = hold(device.alloc(rows * spec.k * 4, 'dsa top-k').fill(0xa5));
    const topk = await prepareTopk(gpu, rows, spec.L, spec.k, logits, out);
    const timing = measureLaunches(device, topk.launch, ctx.timing);
    const selection = out.copyToHost(new Int32Array(rows * spec.k));
    const { values, check } = selectionOutputs(ctx, logitsHost, rows, spec.L, spec.k, selection);
    return {
      ours: measurementOf(timing, topk.name, { bytes: dsaTopkBytesRead(rows, spec.L) }),
      outputs: { topk_values: values },
      checks: { 'exact selection': check },
      note: topk.note,
    };
  });
}

async function runDecodeFused(gpu: DsaGpu, spec: DsaDecodeBenchSpec, ctx: CaseContext): Promise<OurCaseResult> {
  const { device } = gpu;
  const rows = dsaDecodeRows(spec);
  return withHeldBuffersAsync(device, async (hold) => {
    const x = uploadDecodeInputs(device, ctx, spec, hold);
    const logits = hold(device.alloc(rows * spec.L * 4, 'dsa logits').fill(0xff));
    const out = hold(device.alloc(rows * spec.k * 4, 'dsa top-k').fill(0xa5));
    const indexer = await prepareDecode(gpu, spec, x, logits);
    const topk = await prepareTopk(gpu, rows, spec.L, spec.k, logits, out);
    const timing = measureLaunches(
      device,
      () => {
        indexer.launch();
        topk.launch();
      },
      ctx.timing,
    );
    // What the last timed step left: its logits and the selection made from them.
    const host = logits.copyToHost(new Float32Array(rows * spec.L));
    const selection = out.copyToHost(new Int32Array(rows * spec.k));
    const { values, check } = selectionOutputs(ctx, host, rows, spec.L, spec.k, selection);
    return {
      ours: measurementOf(timing, `${indexer.name} + ${topk.name}`, { bytes: dsaDecodeBytesRead(spec) }),
      outputs: { logits: ctx.writeTensor('logits', 'fp32', [rows, spec.L], host), topk_values: values },
      checks: { 'logits sample': decodeLogitsCheck(x, host), 'exact selection': check },
      note: `indexer then top-k on one stream; ${indexer.note}; ${topk.note}`,
    };
  });
}

/** Reads a prefill case's inputs (REFERENCE_OPS.md dsa_indexer_prefill). */
export function readPrefillHost(ctx: CaseContext, spec: DsaPrefillBenchSpec): DsaPrefillHost {
  const { s, L, h } = spec;
  return {
    S: s,
    H: h,
    Skv: L,
    q: new Uint8Array(readCaseInput(ctx, 'q', 'uint8', [s, h, DSA_INDEX_HEAD_DIM])),
    weights: float32Of(readCaseInput(ctx, 'weights', 'fp32', [s, h])),
    k: new Uint8Array(readCaseInput(ctx, 'k', 'uint8', [L, DSA_INDEX_HEAD_DIM])),
    kScales: float32Of(readCaseInput(ctx, 'k_scales', 'fp32', [L])),
    windowStart: int32Of(readCaseInput(ctx, 'window_start', 'int32', [s])),
    windowEnd: int32Of(readCaseInput(ctx, 'window_end', 'int32', [s])),
  };
}

/**
 * Writes our [s][L] logits to the case file chunk by chunk (whole rows per chunk; `read` fills a chunk from
 * its byte offset, e.g. from the device), keeping the sampled rows.
 */
export function writePrefillLogits(
  ctx: CaseContext,
  spec: DsaPrefillBenchSpec,
  sampled: readonly number[],
  read: (chunk: Uint8Array, offset: number) => void,
): { readonly file: TensorFile; readonly kept: Map<number, Float32Array> } {
  const rowBytes = spec.L * 4;
  const kept = new Map<number, Float32Array>();
  const file = writeOurTensorChunks(
    ctx,
    'logits',
    'fp32',
    [spec.s, spec.L],
    (chunk, offset) => {
      read(chunk, offset);
      const first = offset / rowBytes;
      for (const t of sampled) {
        if (t >= first && t < first + chunk.length / rowBytes)
          kept.set(t, new Float32Array(chunk.slice((t - first) * rowBytes, (t - first + 1) * rowBytes).buffer));
      }
    },
    rowBytes * Math.max(1, Math.floor(CASE_FILE_CHUNK_BYTES / rowBytes)),
  );
  return { file, kept };
}

async function runPrefill(gpu: DsaGpu, spec: DsaPrefillBenchSpec, ctx: CaseContext): Promise<OurCaseResult> {
  const { device } = gpu;
  const host = readPrefillHost(ctx, spec);
  return withHeldBuffersAsync(device, async (hold) => {
    const up = (view: ArrayBufferView) => hold(device.upload(bytesOf(view)));
    const logits = hold(device.alloc(spec.s * spec.L * 4, 'dsa prefill logits').fill(0xff));
    const buffers = {
      q: up(host.q),
      weights: up(host.weights),
      k: up(host.k),
      kScales: up(host.kScales),
      windowStart: up(host.windowStart),
      windowEnd: up(host.windowEnd),
      logits,
    };
    const config = checkDsaIndexerPrefillConfig({ seqQ: spec.s, seqKv: spec.L, heads: spec.h });
    const packed = packDsaIndexerPrefill(config, buffers, (m) => encodeTensorMapTiled(device, m));
    const kernel = await gpu.prefill(packed.instance);
    const timing = measureLaunches(device, () => kernel.launch(packed), ctx.timing);
    const sample = dsaPrefillSample(host);
    const { file, kept } = writePrefillLogits(ctx, spec, sample.rows, (chunk, offset) => logits.copyToHost(chunk, { offset }));
    return {
      ours: measurementOf(timing, packed.instance.name, { bytes: dsaPrefillBytesMoved(spec), flops: dsaPrefillFlops(spec) }),
      outputs: { logits: file },
      checks: { 'logits sample': dsaPrefillLogitsCheck(host, sample, kept) },
      note: `${resourcesNote(packed.instance.name, kernel.compiled.resources)}; grid ${packed.grid.join('x')}`,
    };
  });
}

/** A `BenchSuite` for `runSuite` over `cases` (default every case); the device (0) is opened on the first runOurs. */
export function dsaIndexerSuite(cases: readonly SuiteCase[] = DSA_INDEXER_BENCH_CASES): BenchSuite {
  let gpu: DsaGpu | undefined;
  return {
    name: 'dsa-indexer',
    cases,
    async runOurs(c: SuiteCase, ctx: CaseContext): Promise<OurCaseResult> {
      const spec = dsaBenchSpecOf(c);
      gpu ??= openGpu();
      const result =
        spec.mode === 'prefill'
          ? await runPrefill(gpu, spec, ctx)
          : spec.stage === 'indexer'
            ? await runDecodeIndexer(gpu, spec, ctx)
            : spec.stage === 'topk'
              ? await runDecodeTopk(gpu, spec, ctx)
              : await runDecodeFused(gpu, spec, ctx);
      for (const [name, check] of Object.entries(result.checks ?? {}))
        ctx.log(`  ${c.name} ${name}: ${check.ok ? 'ok' : 'FAIL'} ${check.detail}`);
      return result;
    },
    dispose(): void {
      if (gpu === undefined) return;
      gpu.device.synchronize();
      for (const k of [...gpu.indexers(), ...gpu.topk.builds()]) void k.then((kernel) => kernel.dispose());
    },
  };
}
