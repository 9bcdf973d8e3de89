// GPU tests of the DSA decode step (node:test; run on the GPU machine): indexer → top-k to cache slots → sparse MLA
// decode, packed by packDsaDecodeStep and enqueued by DsaDecodeStep. Small ragged steps (next_n 1 and 2, contexts
// shorter than top-k, sinks, h_q 64 and 128) are checked stage by stage against the CPU references of the whole path
// (checkDsaDecodeStepOutputs). Then prints the step's time at 128K context for b 1 and 32, back to back, as its launches
// and replayed as one CUDA graph (caches filled with a repeated 64-page chunk, so every page is distinct memory but cheap
// to make; row 0 checked after the timing). Skipped without a GPU.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Prng } from '@tilekit/host';
import { Device, encodeTensorMapTiled, timeBackToBack, type DeviceBuffer } from '@tilekit/runtime';
import { gpu, gpuTestCompiler, OwnedBuffers } from '@tilekit/runtime/testing';
import { DSA_MLA_PAGE_BYTES, DSA_MLA_PAGE_TOKENS } from '../dsaMlaCacheLayout.ts';
import { DSA_PAGE_BYTES, DSA_PAGE_TOKENS } from '../dsaShape.ts';
import { DSA_SPARSE_MLA_QK_DIM, DSA_SPARSE_MLA_SM_SCALE, DSA_SPARSE_MLA_V_DIM } from '../dsaSparseMlaShape.ts';
import { compareDsaSparseMla } from '../reference/compareDsaSparseMla.ts';
import { dsaBf16Bits } from '../reference/dsaBf16Bits.ts';
import { dsaMlaCacheRowReader } from '../reference/dsaMlaCacheRowReader.ts';
import { dsaQuantizeIndexKeys } from '../reference/dsaQuantizeIndexKeys.ts';
import { dsaSparseMlaDecodeReferenceWithBound } from '../reference/dsaSparseMlaReference.ts';
import { dsaTopkReference } from '../reference/dsaTopkReference.ts';
import { dsaTopkToPageTable } from '../reference/dsaTopkToPageTable.ts';
import { dsaWriteIndexCacheReference } from '../reference/dsaWriteIndexCacheReference.ts';
import { checkDsaDecodeStepOutputs } from '../testing/checkDsaDecodeStepOutputs.ts';
import { dsaRandomDecodeStepInput, type DsaRandomDecodeStepOptions } from '../testing/dsaRandomDecodeStep.ts';
import { dsaRandomE4m3Bits, dsaRandomIndexKeys, dsaRandomIndexWeights } from '../testing/dsaRandomInputs.ts';
import { dsaSparseMlaDecodeCache } from '../testing/dsaSparseMlaDecodeCache.ts';
import { dsaRandomSparseMlaRows } from '../testing/dsaSparseMlaInputs.ts';
import {
  checkDsaDecodeStepConfig,
  dsaDecodeStepWorkspaceBytes,
  packDsaDecodeStep,
  type CheckedDsaDecodeStepConfig,
  type DsaDecodeStepPacked,
} from './dsaDecodeStep.ts';
import { DsaLaunchSequence } from './dsaLaunchSequence.ts';

const compiler = gpuTestCompiler('dsa-decode-step-gpu');

/** A cache given whole, or as a chunk repeated until it spans `bytes`. */
type HostCache = Uint8Array | { readonly chunk: Uint8Array; readonly bytes: number };

/** The host side of one step. */
interface StepHost {
  readonly indexQ: Uint8Array;
  readonly indexWeights: Float32Array;
  readonly indexCache: HostCache;
  readonly blockTable: Int32Array;
  readonly contextLens: Int32Array;
  readonly q: Float32Array;
  readonly mlaCache: HostCache;
  readonly attnSink?: Float32Array | undefined;
}

/** Device buffers of one step, the built step, and the read-back. */
class StepRun {
  readonly device = Device.open(0);
  readonly owned = new OwnedBuffers(this.device);
  readonly c: CheckedDsaDecodeStepConfig;
  readonly buffers;

  constructor(c: CheckedDsaDecodeStepConfig, x: StepHost) {
    this.c = c;
    const rows = c.batch * c.nextN * c.hQ;
    this.buffers = {
      indexQ: this.up(x.indexQ),
      indexWeights: this.up(x.indexWeights),
      indexCache: this.cache(x.indexCache),
      blockTable: this.up(x.blockTable),
      contextLens: this.up(x.contextLens),
      q: this.up(dsaBf16Bits(x.q)),
      mlaCache: this.cache(x.mlaCache),
      attnSink: x.attnSink === undefined ? undefined : this.up(x.attnSink),
      out: this.alloc(rows * DSA_SPARSE_MLA_V_DIM * 2),
      lse: this.alloc(rows * 4),
      maxLogits: this.alloc(rows * 4),
      workspace: this.alloc(dsaDecodeStepWorkspaceBytes(c, this.device.smCount)),
    };
  }

  up(x: ArrayBufferView): DeviceBuffer {
    return this.owned.upload(x);
  }

  alloc(bytes: number): DeviceBuffer {
    return this.owned.alloc(bytes, { fill: 0xa5 });
  }

  cache(x: HostCache): DeviceBuffer {
    if (x instanceof Uint8Array) return this.up(x);
    const b = this.alloc(x.bytes);
    for (let at = 0; at < x.bytes; at += x.chunk.length)
      b.copyFromHost(x.chunk.subarray(0, Math.min(x.chunk.length, x.bytes - at)), { offset: at });
    return b;
  }

  async build(): Promise<{ readonly packed: DsaDecodeStepPacked; readonly seq: DsaLaunchSequence }> {
    const packed = packDsaDecodeStep(this.c, this.buffers, {
      encode: (m) => encodeTensorMapTiled(this.device, m),
      smCount: this.device.smCount,
    });
    return { packed, seq: await DsaLaunchSequence.build(packed.launches, { device: this.device, compiler }) };
  }

  read(packed: DsaDecodeStepPacked) {
    this.device.synchronize();
    const c = this.c;
    const rows = c.batch * c.nextN;
    const logits = new Float32Array(rows * c.maxContext);
    const slots = new Int32Array(rows * c.topk);
    const out = new Uint16Array(rows * c.hQ * DSA_SPARSE_MLA_V_DIM);
    const lse = new Float32Array(rows * c.hQ);
    const maxLogits = new Float32Array(rows * c.hQ);
    readRange(this.buffers.workspace, packed.logits.ptr, logits);
    readRange(this.buffers.workspace, packed.slots.ptr, slots);
    this.buffers.out.copyToHost(out);
    this.buffers.lse.copyToHost(lse);
    this.buffers.maxLogits.copyToHost(maxLogits);
    return { logits, slots, out, lse, maxLogits };
  }

  dispose(): void {
    this.device.synchronize();
    this.owned.dispose();
  }
}

/** Copies the bytes of `host` from address `ptr` inside `buffer`. */
function readRange(buffer: DeviceBuffer, ptr: bigint, host: Int32Array | Float32Array): void {
  buffer.copyToHost(host, { offset: Number(ptr - buffer.ptr) });
}

const SMALL: readonly (readonly [string, DsaRandomDecodeStepOptions])[] = [
  [
    'b2 next_n 1, context ≤ 1000, h_q 128, top-256, sinks',
    { B: 2, nextN: 1, indexHeads: 64, maxContext: 1000, hQ: 128, topk: 256, sink: true },
  ],
  [
    'b3 next_n 2, context 2 … 3000, h_q 64, top-512',
    { B: 3, nextN: 2, indexHeads: 32, maxContext: 3000, minContext: 2, hQ: 64, topk: 512 },
  ],
  ['b1 next_n 1, context 300 < top-2048 (−1 slots), h_q 128', { B: 1, nextN: 1, indexHeads: 64, maxContext: 300, hQ: 128, topk: 2048 }],
];

SMALL.forEach(([label, o], i) => {
  test(`kernel-dsa/gpu decode step: ${label}`, gpu.options, async () => {
    const x = dsaRandomDecodeStepInput(o, new Prng(0x5c_0001 + i));
    const input = x.index.input;
    const c = checkDsaDecodeStepConfig({
      batch: o.B,
      nextN: o.nextN,
      indexHeads: o.indexHeads,
      maxContext: o.maxContext,
      maxPages: input.maxPages,
      numPages: x.numPages,
      hQ: o.hQ,
      topk: o.topk,
      smScale: x.smScale,
      hasSink: x.attnSink !== undefined,
    });
    const host = {
      ...input,
      indexQ: input.q,
      indexWeights: input.weights,
      indexCache: input.cache,
      q: x.q,
      mlaCache: x.mlaCache,
      attnSink: x.attnSink,
    };
    const run = new StepRun(c, host);
    try {
      const { packed, seq } = await run.build();
      seq.launch();
      const verdict = checkDsaDecodeStepOutputs(x, run.read(packed));
      assert.ok(verdict.ok, `${label}: ${verdict.lines.join('; ')}`);
      console.log(`  ${packed.launches.map((l) => l.instance.name).join(' → ')}: ${verdict.lines.join('; ')}`);
      seq.dispose();
    } finally {
      run.dispose();
    }
  });
});

/** A 64-page index cache of random keys (slots 0 … 4095) and a 64-page MLA cache of random latent rows. */
function cacheChunks(rng: Prng) {
  const tokens = 64 * DSA_PAGE_TOKENS;
  const keys = dsaQuantizeIndexKeys(dsaRandomIndexKeys(tokens, rng), tokens, 'fp32');
  const slots = Int32Array.from({ length: tokens }, (_, t) => t);
  const index = dsaWriteIndexCacheReference({ cache: new Uint8Array(64 * DSA_PAGE_BYTES), ...keys, slots });
  const latent = dsaRandomSparseMlaRows(64 * DSA_MLA_PAGE_TOKENS, rng);
  return { index, mla: dsaSparseMlaDecodeCache({ latent, numPages: 64 }) };
}

test('kernel-dsa/gpu decode step: time at 128K context, b 1 and 32, h_q 128, top-2048 (printed, row 0 checked)', gpu.options, async () => {
  const L = 131072;
  const maxPages = L / DSA_PAGE_TOKENS;
  const rng = new Prng(0x5c_7000);
  const chunks = cacheChunks(rng);
  for (const b of [1, 32]) {
    const numPages = b * maxPages;
    const c = checkDsaDecodeStepConfig({
      batch: b,
      nextN: 1,
      indexHeads: 64,
      maxContext: L,
      maxPages,
      numPages,
      hQ: 128,
      topk: 2048,
      smScale: DSA_SPARSE_MLA_SM_SCALE,
      hasSink: false,
    });
    const host: StepHost = {
      indexQ: dsaRandomE4m3Bits(b * 64 * 128, rng),
      indexWeights: dsaRandomIndexWeights(b, 64, rng),
      indexCache: { chunk: chunks.index, bytes: numPages * DSA_PAGE_BYTES },
      blockTable: Int32Array.from({ length: b * maxPages }, (_, i) => i),
      contextLens: new Int32Array(b).fill(L),
      q: dsaRandomSparseMlaRows(b * 128, rng, -1.5, 0.5),
      mlaCache: { chunk: chunks.mla, bytes: numPages * DSA_MLA_PAGE_BYTES },
    };
    const run = new StepRun(c, host);
    try {
      const { packed, seq } = await run.build();
      const stream = run.device.createStream();
      const graph = seq.capture(stream);
      const plan = { warmup: 3, repetitions: 5, targetMs: 20, minLaunches: 20, maxLaunches: 2000, stream };
      const median = (x: readonly number[]): number => [...x].sort((p, q) => p - q)[Math.floor(x.length / 2)]!;
      const launched = median(timeBackToBack(run.device, () => seq.launch(stream), plan).reps);
      const replayed = median(timeBackToBack(run.device, () => graph.launch(), plan).reps);
      stream.synchronize();
      graph.dispose();
      stream.dispose();
      const got = run.read(packed);
      const positions = dsaTopkReference({ logits: got.logits.subarray(0, L), rows: 1, rowStride: L, k: 2048 });
      const slots = dsaTopkToPageTable(positions, 1, 2048, host.blockTable, maxPages, 1);
      assert.deepEqual(
        Array.from(got.slots.subarray(0, 2048)),
        Array.from(slots),
        `b ${b}: row 0's slots are not the exact top-k of its logits`,
      );
      const chunkRows = dsaMlaCacheRowReader(chunks.mla);
      const expected = dsaSparseMlaDecodeReferenceWithBound({
        q: host.q.subarray(0, 128 * DSA_SPARSE_MLA_QK_DIM),
        indices: slots,
        b: 1,
        sQ: 1,
        hQ: 128,
        topk: 2048,
        smScale: DSA_SPARSE_MLA_SM_SCALE,
        readRow: (s) => (s >= 0 && s < numPages * 64 ? chunkRows(s % (64 * 64)) : undefined),
      });
      const lse = got.lse.subarray(0, 128);
      const verdict = compareDsaSparseMla(expected, {
        out: got.out.subarray(0, 128 * DSA_SPARSE_MLA_V_DIM),
        lse,
        maxLogits: got.maxLogits.subarray(0, 128),
      });
      assert.ok(verdict.ok, `b ${b}: row 0's attention is off the reference`);
      const names = packed.launches.map((l) => l.instance.name).join(' → ');
      console.log(
        `  b ${b}, L ${L}: ${(replayed * 1000).toFixed(1)} µs per step as one CUDA graph, ` +
          `${(launched * 1000).toFixed(1)} µs as ${packed.launches.length} launches ` +
          `(back to back; ${names}; ${packed.attention.splits} split(s)); row 0 valid`,
      );
      seq.dispose();
    } finally {
      run.dispose();
    }
  }
});
