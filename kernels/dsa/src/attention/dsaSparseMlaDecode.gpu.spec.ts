// GPU tests of the sparse MLA decode over the FP8 cache (node:test; run on the GPU machine): every ragged case of
// DSA_SPARSE_MLA_DECODE_GPU_CASES (s_q 1 and 2, h 64 and 128, topk_length, sinks, empty sequences, invalid slots,
// −1 padding), each with the launcher's split, one split (the final epilogue) and three splits (partials and the
// combine), must lie within compareDsaSparseMla's bound of the float64 reference over the dequantized cache, with
// FlashMLA's conventions exact on empty rows. Then prints the time and TFLOP/s (2·entries·h·(576 + 512)) of topk
// 2048 × h 128 over a 32768-slot cache for b 1, 32 and 128, launched back to back (not asserted). Skipped without a GPU.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Prng } from '@tilekit/host';
import { buildOncePerInstance, Device, timeBackToBack, type DeviceBuffer, type LoadableInstance } from '@tilekit/runtime';
import { gpu, gpuTestCompiler, OwnedBuffers } from '@tilekit/runtime/testing';
import { checkDsaSparseMlaDecodeConfig, type DsaSparseMlaDecodeConfig } from '../checkDsaSparseMlaConfig.ts';
import { DsaKernel, type DsaPackedLaunch } from '../dsaKernel.ts';
import { DSA_MLA_PAGE_BYTES } from '../dsaMlaCacheLayout.ts';
import { DSA_SPARSE_MLA_QK_DIM, DSA_SPARSE_MLA_V_DIM } from '../dsaSparseMlaShape.ts';
import { compareDsaSparseMla } from '../reference/compareDsaSparseMla.ts';
import { dsaBf16Bits } from '../reference/dsaBf16Bits.ts';
import { dsaMlaCacheRowReader } from '../reference/dsaMlaCacheRowReader.ts';
import { dsaSparseMlaDecodeReferenceWithBound } from '../reference/dsaSparseMlaReference.ts';
import { dsaSparseMlaDecodeCache } from '../testing/dsaSparseMlaDecodeCache.ts';
import { DSA_SPARSE_MLA_DECODE_GPU_CASES } from '../testing/dsaSparseMlaGpuCases.ts';
import { dsaRandomSparseMlaDecodeInput, type DsaRandomSparseMlaDecode } from '../testing/dsaSparseMlaInputs.ts';
import {
  dsaSparseMlaDecodeSplit,
  dsaSparseMlaDecodeWorkspaceBytes,
  packDsaSparseMlaDecode,
  type DsaSparseMlaDecodePackedLaunches,
} from './dsaSparseMlaDecodeLauncher.ts';

const kernelFor = buildOncePerInstance((i: LoadableInstance) =>
  DsaKernel.build(i, { device: Device.open(0), compiler: gpuTestCompiler('dsa-sparse-mla-decode-gpu') }),
);

/** The device buffers of one decode problem, its packed launches, and the read-back. */
class DecodeRun {
  readonly device = Device.open(0);
  readonly owned = new OwnedBuffers(this.device);
  readonly packed: DsaSparseMlaDecodePackedLaunches;
  readonly out: DeviceBuffer;
  readonly lse: DeviceBuffer;
  readonly maxLogits: DeviceBuffer;
  readonly config: DsaSparseMlaDecodeConfig;

  constructor(x: DsaRandomSparseMlaDecode, cache: Uint8Array, splits?: number) {
    const p = x.problem;
    this.config = checkDsaSparseMlaDecodeConfig({
      b: p.b,
      sQ: p.sQ,
      hQ: p.hQ,
      topk: p.topk,
      numPages: x.numPages,
      pageStrideBytes: DSA_MLA_PAGE_BYTES,
      smScale: p.smScale,
      hasSink: p.attnSink !== undefined,
      hasTopkLength: p.topkLength !== undefined,
    });
    const rows = p.b * p.sQ * p.hQ;
    this.out = this.alloc(rows * DSA_SPARSE_MLA_V_DIM * 2);
    this.lse = this.alloc(rows * 4);
    this.maxLogits = this.alloc(rows * 4);
    const split = dsaSparseMlaDecodeSplit(this.config, this.device.smCount, splits);
    const workspace = dsaSparseMlaDecodeWorkspaceBytes(this.config, split.splits);
    this.packed = packDsaSparseMlaDecode(
      this.config,
      {
        q: this.up(dsaBf16Bits(p.q)),
        cache: this.up(cache),
        indices: this.up(p.indices),
        topkLength: p.topkLength === undefined ? undefined : this.up(p.topkLength),
        attnSink: p.attnSink === undefined ? undefined : this.up(Float32Array.from(p.attnSink)),
        out: this.out,
        lse: this.lse,
        maxLogits: this.maxLogits,
        workspace: workspace === 0 ? undefined : this.alloc(workspace),
      },
      { smCount: this.device.smCount, ...(splits === undefined ? {} : { splits }) },
    );
  }

  up(x: ArrayBufferView): DeviceBuffer {
    return this.owned.upload(x);
  }

  alloc(bytes: number): DeviceBuffer {
    return this.owned.alloc(bytes, { fill: 0xa5 });
  }

  /** Builds both kernels (once per instance) and returns the enqueue of the whole decode. */
  async launcher(): Promise<() => void> {
    const launches: DsaPackedLaunch<LoadableInstance>[] = [
      this.packed.decode,
      ...(this.packed.combine === undefined ? [] : [this.packed.combine]),
    ];
    const kernels = await Promise.all(launches.map((l) => kernelFor(l.instance)));
    return () => launches.forEach((l, i) => kernels[i]!.launch(l));
  }

  read(): { readonly out: Uint16Array; readonly lse: Float32Array; readonly maxLogits: Float32Array } {
    this.device.synchronize();
    const rows = this.config.b * this.config.sQ * this.config.hQ;
    const out = new Uint16Array(rows * DSA_SPARSE_MLA_V_DIM);
    const lse = new Float32Array(rows);
    const maxLogits = new Float32Array(rows);
    this.out.copyToHost(out);
    this.lse.copyToHost(lse);
    this.maxLogits.copyToHost(maxLogits);
    return { out, lse, maxLogits };
  }

  dispose(): void {
    this.device.synchronize();
    this.owned.dispose();
  }
}

for (const c of DSA_SPARSE_MLA_DECODE_GPU_CASES) {
  test(`kernel-dsa/gpu sparse MLA decode: ${c.label}`, gpu.options, async () => {
    const x = dsaRandomSparseMlaDecodeInput(c.options, new Prng(c.seed));
    const cache = dsaSparseMlaDecodeCache(x);
    const expected = dsaSparseMlaDecodeReferenceWithBound({ ...x.problem, readRow: dsaMlaCacheRowReader(cache) });
    for (const splits of [undefined, 1, 3]) {
      const run = new DecodeRun(x, cache, splits);
      try {
        (await run.launcher())();
        const verdict = compareDsaSparseMla(expected, run.read());
        const line = (
          name: string,
          v: { checked: number; failures: number; worstIndex: number; worstRatio: number } | undefined,
        ): string =>
          v === undefined ? '' : `${name} ${v.failures}/${v.checked} over (worst ratio ${v.worstRatio.toFixed(3)} at ${v.worstIndex})`;
        const summary = [line('out', verdict.out), line('lse', verdict.lse), line('max', verdict.maxLogits)].join('; ');
        const how = `${run.packed.splits} split(s) of ${run.packed.tilesPerSplit} tiles`;
        assert.ok(verdict.ok, `${c.label}, ${how}: ${summary}`);
        console.log(`  ${run.packed.decode.instance.name}, ${how}: ${summary}`);
      } finally {
        run.dispose();
      }
    }
  });
}

test(
  'kernel-dsa/gpu sparse MLA decode: time topk 2048 × h 128 over 32768 slots, b 1 / 32 / 128 (printed, not asserted)',
  gpu.options,
  async () => {
    const base = dsaRandomSparseMlaDecodeInput({ b: 1, sQ: 1, hQ: 128, topk: 2048, numPages: 512 }, new Prng(0x5b_7000));
    const cache = dsaSparseMlaDecodeCache(base);
    for (const b of [1, 32, 128]) {
      const x = dsaRandomSparseMlaDecodeInput({ b, sQ: 1, hQ: 128, topk: 2048, numPages: 512 }, new Prng(0x5b_7000 + b));
      const candidates = b === 128 ? [undefined] : [undefined, ...(b === 1 ? [8, 16, 64] : [1, 4])];
      for (const splits of candidates) {
        const run = new DecodeRun({ ...x, latent: base.latent }, cache, splits);
        try {
          const go = await run.launcher();
          const plan = { warmup: 3, repetitions: 5, targetMs: 20, minLaunches: 20, maxLaunches: 2000 };
          const ms = [...timeBackToBack(run.device, go, plan).reps].sort((p, q) => p - q)[2]!;
          const flops = 2 * b * 2048 * 128 * (DSA_SPARSE_MLA_QK_DIM + DSA_SPARSE_MLA_V_DIM);
          console.log(
            `  b ${b}, ${run.packed.splits} split(s) of ${run.packed.tilesPerSplit} tiles${splits === undefined ? ' (launcher)' : ''}: ` +
              `${(ms * 1000).toFixed(1)} µs, ${(flops / ms / 1e9).toFixed(1)} TFLOP/s`,
          );
        } finally {
          run.dispose();
        }
      }
    }
  },
);
