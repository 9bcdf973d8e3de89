// GPU tests of the index-key cache writer and the lightning indexer (node:test; run on the GPU
// machine): the writer's cache must equal dsaWriteIndexCacheReference byte for byte; the decode
// indexer (reading that GPU-written cache) and the prefill indexer must match the references under
// their per-element error bound, with −∞ exactly where masked. Ragged lengths (1, 17, 127, 259,
// 1000, 4097), empty contexts and windows, nextN 1 and 2, heads 32 and 64, ue8m0 scales. Prints the
// kernel times of a few large shapes (not asserted). Skipped without a GPU.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Prng } from '@tilekit/host';
import { buildOncePerInstance, Device, encodeTensorMapTiled, timeLaunches, type DeviceBuffer } from '@tilekit/runtime';
import { gpu, gpuTestCompiler } from '@tilekit/runtime/testing';
import { checkDsaIndexCacheWriteConfig, packDsaIndexCacheWrite } from '../cache/dsaIndexCacheWriterLauncher.ts';
import type { DsaIndexCacheWriterInstance } from '../cache/dsaIndexCacheWriterInstance.ts';
import { DsaKernel } from '../dsaKernel.ts';
import { DSA_INDEX_HEAD_DIM, DSA_PAGE_BYTES, type DsaScaleFormat } from '../dsaShape.ts';
import { compareDsaLogits } from '../reference/compareDsaLogits.ts';
import { dsaIndexerDecodeReferenceWithBound } from '../reference/dsaIndexerDecodeReference.ts';
import { dsaIndexerPrefillReferenceWithBound, type DsaIndexerPrefillInput } from '../reference/dsaIndexerPrefillReference.ts';
import { dsaRandomDecodeInput, dsaRandomPrefillInput } from '../testing/dsaRandomInputs.ts';
import { checkDsaIndexerDecodeConfig, packDsaIndexerDecode } from './dsaIndexerDecodeLauncher.ts';
import type { DsaIndexerDecodeInstance } from './dsaIndexerDecodeInstance.ts';
import { checkDsaIndexerPrefillConfig, packDsaIndexerPrefill } from './dsaIndexerPrefillLauncher.ts';
import type { DsaIndexerPrefillInstance } from './dsaIndexerPrefillInstance.ts';

const compiler = () => gpuTestCompiler('dsa-indexer-gpu');
const writer = buildOncePerInstance((i: DsaIndexCacheWriterInstance) =>
  DsaKernel.build(i, { device: Device.open(0), compiler: compiler() }),
);
const decoder = buildOncePerInstance((i: DsaIndexerDecodeInstance) => DsaKernel.build(i, { device: Device.open(0), compiler: compiler() }));
const prefiller = buildOncePerInstance((i: DsaIndexerPrefillInstance) =>
  DsaKernel.build(i, { device: Device.open(0), compiler: compiler() }),
);

/** Device buffers that are freed together. */
class Buffers {
  readonly device = Device.open(0);
  private readonly owned: DeviceBuffer[] = [];
  up(x: ArrayBufferView): DeviceBuffer {
    const b = this.device.upload(x);
    this.owned.push(b);
    return b;
  }
  alloc(bytes: number, fill = 0xa5): DeviceBuffer {
    const b = this.device.alloc(Math.max(16, bytes)).fill(fill);
    this.owned.push(b);
    return b;
  }
  dispose(): void {
    this.device.synchronize();
    for (const b of this.owned) b.dispose();
  }
}

/** The bf16 bit patterns of bf16-valued fp32 keys. */
function bf16Bits(keys: Float32Array): Uint16Array {
  const bits = new Uint32Array(keys.buffer, keys.byteOffset, keys.length);
  return Uint16Array.from(bits, (b) => b >>> 16);
}

interface DecodeCase {
  readonly B: number;
  readonly nextN: number;
  readonly H: number;
  readonly maxContext: number;
  readonly scaleFormat?: DsaScaleFormat;
  readonly minContext?: number;
}

/** Writes every sequence's keys with the GPU writer into a 0xff cache; asserts it equals the reference cache byte for byte. */
async function writeCacheOnGpu(bufs: Buffers, c: DecodeCase, seed: number) {
  const rng = new Prng(seed);
  const { input, keys } = dsaRandomDecodeInput({ ...c, ...(c.minContext === undefined ? {} : { minContext: c.minContext }) }, rng);
  const numPages = input.cache.length / DSA_PAGE_BYTES;
  const cache = bufs.alloc(input.cache.length, 0xff);
  for (let b = 0; b < c.B; b++) {
    const tokens = keys[b]!.length / DSA_INDEX_HEAD_DIM;
    if (tokens === 0) continue;
    const slots = Int32Array.from({ length: tokens }, (_, p) => input.blockTable[b * input.maxPages + (p >> 6)]! * 64 + (p & 63));
    const config = checkDsaIndexCacheWriteConfig({ tokens, numPages, scaleFormat: c.scaleFormat ?? 'fp32' });
    const packed = packDsaIndexCacheWrite(config, { keys: bufs.up(bf16Bits(keys[b]!)), slots: bufs.up(slots), cache });
    (await writer(packed.instance)).launch(packed);
  }
  bufs.device.synchronize();
  const host = new Uint8Array(input.cache.length);
  cache.copyToHost(host);
  let differ = 0;
  for (let i = 0; i < host.length; i++) if (host[i] !== input.cache[i]) differ++;
  assert.equal(differ, 0, `GPU-written cache differs from the reference in ${differ} of ${host.length} bytes`);
  return { input, cache, numPages };
}

async function runDecode(c: DecodeCase, seed: number, timeIt = false): Promise<string> {
  const bufs = new Buffers();
  try {
    const { input, cache, numPages } = await writeCacheOnGpu(bufs, c, seed);
    const config = checkDsaIndexerDecodeConfig({
      batch: c.B,
      nextN: c.nextN,
      heads: c.H,
      maxContext: c.maxContext,
      maxPages: input.maxPages,
      numPages,
    });
    const logits = bufs.alloc(c.B * c.nextN * c.maxContext * 4);
    const buffers = {
      q: bufs.up(input.q),
      weights: bufs.up(input.weights),
      cache,
      blockTable: bufs.up(input.blockTable),
      contextLens: bufs.up(input.contextLens),
      logits,
    };
    const packed = packDsaIndexerDecode(config, buffers, (m) => encodeTensorMapTiled(bufs.device, m), bufs.device.smCount);
    const kernel = await decoder(packed.instance);
    kernel.launch(packed);
    bufs.device.synchronize();
    const host = new Float32Array(c.B * c.nextN * c.maxContext);
    logits.copyToHost(host);
    let note = `${packed.instance.name} grid ${packed.grid.join('x')}`;
    if (!timeIt) {
      const ref = dsaIndexerDecodeReferenceWithBound(input);
      const verdict = compareDsaLogits(ref.logits, host, ref.errorBound);
      assert.ok(
        verdict.ok,
        `decode ${JSON.stringify(c)}: ${verdict.overBound} over the bound, ${verdict.maskMismatches} mask mismatches, ` +
          `worst ${verdict.worstError} at ${verdict.worstIndex} (ratio ${verdict.worstRatio})`,
      );
      note += `: ${verdict.checked} checked, worst ratio ${verdict.worstRatio.toFixed(3)}`;
    }
    if (timeIt) {
      const ms = timeLaunches(bufs.device, () => kernel.launch(packed), { warmup: 3, repeat: 10 }).sort((x, y) => x - y)[5]!;
      const bytes = input.contextLens.reduce((s, l) => s + l, 0) * 132;
      note += `; median ${(ms * 1000).toFixed(1)} µs, ${(bytes / ms / 1e6).toFixed(0)} GB/s of cache`;
    }
    return note;
  } finally {
    bufs.dispose();
  }
}

/** The prefill problem restricted to query rows `rows` (the reference then costs |rows| of S). */
function prefillRows(input: DsaIndexerPrefillInput, rows: readonly number[]): DsaIndexerPrefillInput {
  const D = DSA_INDEX_HEAD_DIM;
  const H = input.H;
  const q = new Uint8Array(rows.length * H * D);
  const weights = new Float32Array(rows.length * H);
  rows.forEach((t, i) => {
    q.set(input.q.subarray(t * H * D, (t + 1) * H * D), i * H * D);
    weights.set(input.weights.subarray(t * H, (t + 1) * H), i * H);
  });
  const pick = (a: Int32Array): Int32Array => Int32Array.from(rows, (t) => a[t]!);
  return { ...input, q, weights, windowStart: pick(input.windowStart), windowEnd: pick(input.windowEnd), S: rows.length };
}

/** At most `n` query rows spread over [0, S), always with the first and the last. */
function sampleRows(S: number, n: number): number[] {
  if (S <= n) return Array.from({ length: S }, (_, t) => t);
  return [...new Set(Array.from({ length: n }, (_, i) => Math.round((i * (S - 1)) / (n - 1))))];
}

interface PrefillCase {
  readonly S: number;
  readonly Skv: number;
  readonly H: number;
  readonly windows: 'causal' | 'random';
  readonly scaleFormat?: DsaScaleFormat;
}

async function runPrefill(c: PrefillCase, seed: number, timeIt = false): Promise<string> {
  const bufs = new Buffers();
  try {
    const input = dsaRandomPrefillInput(
      { S: c.S, H: c.H, Skv: c.Skv, windows: c.windows, scaleFormat: c.scaleFormat ?? 'fp32' },
      new Prng(seed),
    );
    const config = checkDsaIndexerPrefillConfig({ seqQ: c.S, seqKv: c.Skv, heads: c.H });
    const logits = bufs.alloc(c.S * c.Skv * 4);
    const buffers = {
      q: bufs.up(input.q),
      weights: bufs.up(input.weights),
      k: bufs.up(input.k),
      kScales: bufs.up(input.kScales),
      windowStart: bufs.up(input.windowStart),
      windowEnd: bufs.up(input.windowEnd),
      logits,
    };
    const packed = packDsaIndexerPrefill(config, buffers, (m) => encodeTensorMapTiled(bufs.device, m));
    const kernel = await prefiller(packed.instance);
    kernel.launch(packed);
    bufs.device.synchronize();
    const host = new Float32Array(c.S * c.Skv);
    logits.copyToHost(host);
    let note = `${packed.instance.name} grid ${packed.grid.join('x')}`;
    if (!timeIt) {
      const rows = sampleRows(c.S, 48);
      const ref = dsaIndexerPrefillReferenceWithBound(prefillRows(input, rows));
      const got = new Float32Array(rows.length * c.Skv);
      rows.forEach((t, i) => got.set(host.subarray(t * c.Skv, (t + 1) * c.Skv), i * c.Skv));
      const verdict = compareDsaLogits(ref.logits, got, ref.errorBound);
      assert.ok(
        verdict.ok,
        `prefill ${JSON.stringify(c)}: ${verdict.overBound} over the bound, ${verdict.maskMismatches} mask mismatches, ` +
          `worst ${verdict.worstError} at ${verdict.worstIndex} (ratio ${verdict.worstRatio})`,
      );
      note += `: rows ${rows.length}/${c.S}, ${verdict.checked} checked, worst ratio ${verdict.worstRatio.toFixed(3)}`;
    } else {
      const ms = timeLaunches(bufs.device, () => kernel.launch(packed), { warmup: 3, repeat: 10 }).sort((x, y) => x - y)[5]!;
      let pairs = 0;
      for (let t = 0; t < c.S; t++) pairs += Math.max(0, Math.min(input.windowEnd[t]!, c.Skv) - Math.max(input.windowStart[t]!, 0));
      note += `; median ${(ms * 1000).toFixed(1)} µs, ${((2 * pairs * c.H * DSA_INDEX_HEAD_DIM) / ms / 1e9).toFixed(0)} TFLOP/s`;
    }
    return note;
  } finally {
    bufs.dispose();
  }
}

const decodeCases: readonly DecodeCase[] = [
  { B: 1, nextN: 1, H: 64, maxContext: 1 },
  { B: 3, nextN: 1, H: 64, maxContext: 17 },
  { B: 2, nextN: 2, H: 64, maxContext: 127, scaleFormat: 'ue8m0' },
  { B: 4, nextN: 1, H: 32, maxContext: 259, minContext: 0 },
  { B: 3, nextN: 2, H: 32, maxContext: 1000 },
  { B: 2, nextN: 2, H: 64, maxContext: 4097, scaleFormat: 'ue8m0' },
  { B: 5, nextN: 1, H: 64, maxContext: 8192, minContext: 0 },
];

/** A case's test name: `kernel-dsa/gpu indexer: decode B3 n1 H64 L17 (fp32, min 0)` and so on (the sanitizer plan selects by it). */
function decodeName(c: DecodeCase): string {
  const min = c.minContext === undefined ? '' : `, min ${c.minContext}`;
  return `kernel-dsa/gpu indexer: decode B${c.B} n${c.nextN} H${c.H} L${c.maxContext} (${c.scaleFormat ?? 'fp32'}${min})`;
}

function prefillName(c: PrefillCase): string {
  return `kernel-dsa/gpu indexer: prefill S${c.S} Skv${c.Skv} H${c.H} ${c.windows} (${c.scaleFormat ?? 'fp32'})`;
}

for (const [i, c] of decodeCases.entries()) test(decodeName(c), gpu.options, async () => console.log(`  ${await runDecode(c, 100 + i)}`));

const prefillCases: readonly PrefillCase[] = [
  { S: 1, Skv: 1, H: 64, windows: 'causal' },
  { S: 17, Skv: 17, H: 64, windows: 'causal' },
  { S: 127, Skv: 259, H: 32, windows: 'random', scaleFormat: 'ue8m0' },
  { S: 259, Skv: 1000, H: 64, windows: 'causal' },
  { S: 1000, Skv: 1000, H: 32, windows: 'random' },
  { S: 4096, Skv: 8192, H: 64, windows: 'causal' },
  { S: 300, Skv: 4097, H: 64, windows: 'random' },
];

for (const [i, c] of prefillCases.entries())
  test(prefillName(c), gpu.options, async () => console.log(`  ${await runPrefill(c, 200 + i)}`));

test('kernel-dsa/gpu indexer: timings (printed, not asserted)', gpu.options, async (t) => {
  await t.test('decode B1 L131072 nextN1 H64', async () =>
    console.log(`  ${await runDecode({ B: 1, nextN: 1, H: 64, maxContext: 131072, minContext: 131072 }, 7, true)}`),
  );
  await t.test('decode B32 L32768 nextN1 H64', async () =>
    console.log(`  ${await runDecode({ B: 32, nextN: 1, H: 64, maxContext: 32768, minContext: 32768 }, 8, true)}`),
  );
  await t.test('prefill S4096 Skv32768 H64 causal', async () =>
    console.log(`  ${await runPrefill({ S: 4096, Skv: 32768, H: 64, windows: 'causal' }, 9, true)}`),
  );
});
