// The GPU half of example_dsa_indexer: write the cache (decode), run the indexer and the top-k,
// validate them (logits under the reference's error bound; the selection exactly equal to
// dsaTopkReference of the GPU's own logits) and time them.
import { gbPerSec, summarizeTimes } from '@tilekit/host';
import {
  checkDsaIndexCacheWriteConfig,
  checkDsaIndexerDecodeConfig,
  checkDsaIndexerPrefillConfig,
  checkDsaTopkConfig,
  compareDsaLogits,
  DSA_INDEX_BYTES_PER_TOKEN,
  DSA_INDEX_HEAD_DIM,
  DsaKernel,
  dsaTopkReference,
  packDsaIndexCacheWrite,
  packDsaIndexerDecode,
  packDsaIndexerPrefill,
  packDsaTopk,
  type DsaIndexerDecodeInput,
  type DsaIndexerLogits,
  type DsaIndexerPrefillInput,
} from '@tilekit/kernel-dsa';
import { Device, encodeTensorMapTiled, timeLaunches, type Compiler, type DeviceBuffer, type LoadableInstance } from '@tilekit/runtime';
import type { DsaIndexerExampleProblem } from './dsaIndexerFlags.ts';

/** The example's inputs: a paged decode problem with its keys, or a prefill problem. */
export type DsaExampleInputs =
  | { readonly mode: 'decode'; readonly decode: DsaIndexerDecodeInput; readonly keys: readonly Float32Array[] }
  | { readonly mode: 'prefill'; readonly prefill: DsaIndexerPrefillInput };

/** What the GPU run needs beside the problem and the inputs. */
export interface DsaGpuRunOptions {
  readonly expected: DsaIndexerLogits | undefined;
  readonly compiler: Compiler;
  readonly warmup: number;
  readonly repeat: number;
}

/** Device buffers and loaded kernels (one per instance), freed together. */
class Held {
  readonly list: DeviceBuffer[] = [];
  readonly kernels = new Map<string, DsaKernel<LoadableInstance>>();
  readonly device: Device;
  constructor(device: Device) {
    this.device = device;
  }
  up(x: ArrayBufferView): DeviceBuffer {
    const b = this.device.upload(x);
    this.list.push(b);
    return b;
  }
  alloc(bytes: number, fill: number): DeviceBuffer {
    const b = this.device.alloc(Math.max(16, bytes)).fill(fill);
    this.list.push(b);
    return b;
  }
  /** `instance` compiled and loaded once for the whole run. */
  async kernel<I extends LoadableInstance>(instance: I, compiler: Compiler): Promise<DsaKernel<I>> {
    const known = this.kernels.get(instance.name);
    if (known !== undefined) return known as unknown as DsaKernel<I>;
    const built = await DsaKernel.build(instance, { device: this.device, compiler });
    this.kernels.set(instance.name, built as unknown as DsaKernel<LoadableInstance>);
    return built;
  }
  dispose(): void {
    this.device.synchronize();
    for (const b of this.list) b.dispose();
    for (const k of this.kernels.values()) k.dispose();
  }
}

/** The bf16 bit patterns of bf16-valued fp32 keys. */
function bf16Bits(keys: Float32Array): Uint16Array {
  return Uint16Array.from(new Uint32Array(keys.buffer, keys.byteOffset, keys.length), (b) => b >>> 16);
}

/** Writes every sequence's keys through the GPU writer; returns the cache buffer and whether it equals the reference cache. */
async function writeCache(
  held: Held,
  p: DsaIndexerExampleProblem,
  input: DsaIndexerDecodeInput,
  keys: readonly Float32Array[],
  compiler: Compiler,
) {
  const numPages = input.cache.length / (64 * DSA_INDEX_BYTES_PER_TOKEN);
  const cache = held.alloc(input.cache.length, 0xff);
  for (const [b, k] of keys.entries()) {
    const tokens = k.length / DSA_INDEX_HEAD_DIM;
    const slots = Int32Array.from({ length: tokens }, (_, t) => input.blockTable[b * input.maxPages + (t >> 6)]! * 64 + (t & 63));
    const packed = packDsaIndexCacheWrite(checkDsaIndexCacheWriteConfig({ tokens, numPages, scaleFormat: p.scaleFormat }), {
      keys: held.up(bf16Bits(k)),
      slots: held.up(slots),
      cache,
    });
    (await held.kernel(packed.instance, compiler)).launch(packed);
  }
  held.device.synchronize();
  const host = new Uint8Array(input.cache.length);
  cache.copyToHost(host);
  return { cache, numPages, equal: host.every((x, i) => x === input.cache[i]) };
}

/** Packs the indexer launch of either mode onto fresh buffers; returns the launch, the logits buffer and the bytes it reads. */
async function indexerLaunch(
  held: Held,
  p: DsaIndexerExampleProblem,
  inputs: DsaExampleInputs,
  compiler: Compiler,
  log: (l: string) => void,
) {
  const encode = (m: Parameters<typeof encodeTensorMapTiled>[1]) => encodeTensorMapTiled(held.device, m);
  const logits = held.alloc(p.queries * p.context * 4, 0xa5);
  if (inputs.mode === 'prefill') {
    const x = inputs.prefill;
    const config = checkDsaIndexerPrefillConfig({ seqQ: p.queries, seqKv: p.context, heads: p.heads });
    const buffers = { q: held.up(x.q), weights: held.up(x.weights), k: held.up(x.k), kScales: held.up(x.kScales) };
    const packed = packDsaIndexerPrefill(
      config,
      { ...buffers, windowStart: held.up(x.windowStart), windowEnd: held.up(x.windowEnd), logits },
      encode,
    );
    const kernel = await held.kernel(packed.instance, compiler);
    return { run: () => kernel.launch(packed), logits, bytes: x.k.length + x.kScales.length * 4 + x.q.length };
  }
  const w = await writeCache(held, p, inputs.decode, inputs.keys, compiler);
  log(`cache written by the GPU writer: ${w.equal ? 'bitwise equal to the reference cache' : 'DIFFERS from the reference cache'}`);
  const x = inputs.decode;
  const config = checkDsaIndexerDecodeConfig({
    batch: p.batch,
    nextN: p.nextN,
    heads: p.heads,
    maxContext: p.context,
    maxPages: x.maxPages,
    numPages: w.numPages,
  });
  const buffers = {
    q: held.up(x.q),
    weights: held.up(x.weights),
    cache: w.cache,
    blockTable: held.up(x.blockTable),
    contextLens: held.up(x.contextLens),
    logits,
  };
  const packed = packDsaIndexerDecode(config, buffers, encode, held.device.smCount);
  const kernel = await held.kernel(packed.instance, compiler);
  return { run: () => kernel.launch(packed), logits, bytes: p.batch * p.context * DSA_INDEX_BYTES_PER_TOKEN, cacheOk: w.equal };
}

function median(held: Held, run: () => void, o: DsaGpuRunOptions): number {
  return summarizeTimes(timeLaunches(held.device, run, { warmup: o.warmup, repeat: o.repeat })).median;
}

/**
 * Runs the problem on device 0 and logs the results; returns 0 when everything validated (or -v=0), 1 otherwise.
 */
export async function runDsaIndexerOnGpu(
  p: DsaIndexerExampleProblem,
  inputs: DsaExampleInputs,
  o: DsaGpuRunOptions,
  log: (line: string) => void,
): Promise<number> {
  const held = new Held(Device.open(0));
  try {
    const ix = await indexerLaunch(held, p, inputs, o.compiler, log);
    const out = held.alloc(p.queries * p.topk * 4, 0xa5);
    const topk = packDsaTopk(checkDsaTopkConfig({ rows: p.queries, rowStride: p.context, k: p.topk }), {
      logits: ix.logits,
      lengths: null,
      out,
    });
    const selector = await held.kernel(topk.instance, o.compiler);
    ix.run();
    selector.launch(topk);
    held.device.synchronize();
    const tIndexer = median(held, ix.run, o);
    const tTopk = median(held, () => selector.launch(topk), o);
    const tBoth = median(held, () => (ix.run(), selector.launch(topk)), o);
    log(
      `${held.device.name}: indexer ${(tIndexer * 1000).toFixed(1)} µs (${gbPerSec(ix.bytes, tIndexer).toFixed(0)} GB/s read), ` +
        `top-${p.topk} ${(tTopk * 1000).toFixed(1)} µs, both ${(tBoth * 1000).toFixed(1)} µs (medians of ${o.repeat})`,
    );
    if (o.expected === undefined) return 0;
    return validate(p, o.expected, ix.logits, out, ix.cacheOk ?? true, log);
  } finally {
    held.dispose();
  }
}

function validate(
  p: DsaIndexerExampleProblem,
  expected: DsaIndexerLogits,
  logitsBuf: DeviceBuffer,
  outBuf: DeviceBuffer,
  cacheOk: boolean,
  log: (l: string) => void,
): number {
  const logits = new Float32Array(p.queries * p.context);
  logitsBuf.copyToHost(logits);
  const verdict = compareDsaLogits(expected.logits, logits, expected.errorBound);
  log(
    `logits: ${verdict.checked} checked, ${verdict.overBound} over the error bound, ${verdict.maskMismatches} mask mismatches ` +
      `(worst ${verdict.worstRatio.toFixed(3)} of the bound)`,
  );
  const got = new Int32Array(p.queries * p.topk);
  outBuf.copyToHost(got);
  const want = dsaTopkReference({ logits, rows: p.queries, rowStride: p.context, k: p.topk });
  const wrongRows = Array.from({ length: p.queries }, (_, r) => r).filter((r) =>
    want.subarray(r * p.topk, (r + 1) * p.topk).some((x, i) => x !== got[r * p.topk + i]),
  );
  log(`top-${p.topk}: ${p.queries - wrongRows.length}/${p.queries} rows equal to the exact selection of the GPU's logits`);
  const ok = verdict.ok && wrongRows.length === 0 && cacheOk;
  log(`valid: ${ok ? 'yes' : 'no'}`);
  return ok ? 0 : 1;
}
