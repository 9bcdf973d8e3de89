// GPU tests of the sparse MLA prefill (node:test; run on the GPU machine): every ragged case of
// DSA_SPARSE_MLA_PREFILL_GPU_CASES (h 64 and 128, topk below/at/past a tile, sKv not a multiple of
// 64, invalid indices of every kind, topk_length, empty rows, sinks, duplicates) must lie within
// compareDsaSparseMla's bound of the float64 reference, with FlashMLA's conventions exact on empty
// rows. Then prints the time and TFLOP/s (2·entries·h·(576 + 512)) of s_q 1024 × topk 2048 × h 128
// over s_kv 32768 with random, contiguous and all-invalid index rows (not asserted; the last two show
// what the gather costs). Skipped without a GPU.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Prng } from '@tilekit/host';
import { buildOncePerInstance, Device, timeLaunches, type DeviceBuffer } from '@tilekit/runtime';
import { gpu, gpuTestCompiler, OwnedBuffers } from '@tilekit/runtime/testing';
import { checkDsaSparseMlaPrefillConfig } from '../checkDsaSparseMlaConfig.ts';
import { DsaKernel } from '../dsaKernel.ts';
import { DSA_SPARSE_MLA_QK_DIM, DSA_SPARSE_MLA_V_DIM } from '../dsaSparseMlaShape.ts';
import { compareDsaSparseMla } from '../reference/compareDsaSparseMla.ts';
import { dsaBf16Bits } from '../reference/dsaBf16Bits.ts';
import { dsaSparseMlaPrefillReferenceWithBound, type DsaSparseMlaPrefillInput } from '../reference/dsaSparseMlaReference.ts';
import { DSA_SPARSE_MLA_PREFILL_GPU_CASES } from '../testing/dsaSparseMlaGpuCases.ts';
import { dsaRandomSparseMlaPrefillInput } from '../testing/dsaSparseMlaInputs.ts';
import type { DsaSparseMlaPrefillInstance } from './dsaSparseMlaPrefillInstance.ts';
import { packDsaSparseMlaPrefill, type DsaSparseMlaPrefillPackedLaunch } from './dsaSparseMlaPrefillLauncher.ts';

const kernelFor = buildOncePerInstance((i: DsaSparseMlaPrefillInstance) =>
  DsaKernel.build(i, { device: Device.open(0), compiler: gpuTestCompiler('dsa-sparse-mla-gpu') }),
);

/** The device buffers of one problem, its packed launch, and the read-back. */
class PrefillRun {
  readonly device = Device.open(0);
  readonly owned = new OwnedBuffers(this.device);
  readonly packed: DsaSparseMlaPrefillPackedLaunch;
  readonly out: DeviceBuffer;
  readonly lse: DeviceBuffer;
  readonly maxLogits: DeviceBuffer;
  readonly x: DsaSparseMlaPrefillInput;

  constructor(x: DsaSparseMlaPrefillInput) {
    this.x = x;
    const rows = x.sQ * x.hQ;
    const config = checkDsaSparseMlaPrefillConfig({
      sQ: x.sQ,
      hQ: x.hQ,
      sKv: x.sKv,
      topk: x.topk,
      dQk: DSA_SPARSE_MLA_QK_DIM,
      dV: DSA_SPARSE_MLA_V_DIM,
      smScale: x.smScale,
      hasSink: x.attnSink !== undefined,
      hasTopkLength: x.topkLength !== undefined,
    });
    this.out = this.alloc(rows * DSA_SPARSE_MLA_V_DIM * 2);
    this.lse = this.alloc(rows * 4);
    this.maxLogits = this.alloc(rows * 4);
    this.packed = packDsaSparseMlaPrefill(config, {
      q: this.up(dsaBf16Bits(x.q)),
      kv: this.up(dsaBf16Bits(x.kv)),
      indices: this.up(x.indices),
      topkLength: x.topkLength === undefined ? undefined : this.up(x.topkLength),
      attnSink: x.attnSink === undefined ? undefined : this.up(Float32Array.from(x.attnSink)),
      out: this.out,
      maxLogits: this.maxLogits,
      lse: this.lse,
    });
  }

  up(x: ArrayBufferView): DeviceBuffer {
    return this.owned.upload(x);
  }

  alloc(bytes: number): DeviceBuffer {
    return this.owned.alloc(bytes, { fill: 0xa5 });
  }

  read(): { readonly out: Uint16Array; readonly lse: Float32Array; readonly maxLogits: Float32Array } {
    this.device.synchronize();
    const rows = this.x.sQ * this.x.hQ;
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

for (const c of DSA_SPARSE_MLA_PREFILL_GPU_CASES) {
  test(`kernel-dsa/gpu sparse MLA prefill: ${c.label}`, gpu.options, async () => {
    const x = dsaRandomSparseMlaPrefillInput(c.options, new Prng(c.seed));
    const run = new PrefillRun(x);
    try {
      const kernel = await kernelFor(run.packed.instance);
      kernel.launch(run.packed);
      const got = run.read();
      const verdict = compareDsaSparseMla(dsaSparseMlaPrefillReferenceWithBound(x), got);
      const line = (name: string, v: { checked: number; failures: number; worstIndex: number; worstRatio: number } | undefined): string =>
        v === undefined ? '' : `${name} ${v.failures}/${v.checked} over (worst ratio ${v.worstRatio.toFixed(3)} at ${v.worstIndex})`;
      const summary = [line('out', verdict.out), line('lse', verdict.lse), line('max', verdict.maxLogits)].join('; ');
      assert.ok(verdict.ok, `${c.label}: ${summary}`);
      console.log(`  ${run.packed.instance.name}: ${summary}`);
    } finally {
      run.dispose();
    }
  });
}

/** The index rows of a timing problem: random distinct tokens, a contiguous run per query, or every entry invalid. */
function timingIndices(x: DsaSparseMlaPrefillInput, pattern: 'random' | 'contiguous' | 'invalid'): DsaSparseMlaPrefillInput {
  if (pattern === 'random') return x;
  const indices = new Int32Array(x.indices.length);
  for (let i = 0; i < indices.length; i++) indices[i] = pattern === 'invalid' ? -1 : (Math.floor(i / x.topk) * 16 + (i % x.topk)) % x.sKv;
  return { ...x, indices };
}

test('kernel-dsa/gpu sparse MLA prefill: time s_q 1024 × topk 2048 × h 128, s_kv 32768 (printed, not asserted)', gpu.options, async () => {
  const x = dsaRandomSparseMlaPrefillInput({ sQ: 1024, hQ: 128, sKv: 32768, topk: 2048 }, new Prng(0x5a_7000));
  for (const pattern of ['random', 'contiguous', 'invalid'] as const) {
    const run = new PrefillRun(timingIndices(x, pattern));
    try {
      const kernel = await kernelFor(run.packed.instance);
      const ms = timeLaunches(run.device, () => kernel.launch(run.packed), { warmup: 3, repeat: 10 }).sort((a, b) => a - b)[5]!;
      const flops = 2 * x.sQ * x.topk * x.hQ * (DSA_SPARSE_MLA_QK_DIM + DSA_SPARSE_MLA_V_DIM);
      console.log(
        `  ${run.packed.instance.name} ${pattern} indices: ${(ms * 1000).toFixed(1)} µs, ${(flops / ms / 1e9).toFixed(1)} TFLOP/s (all entries counted)`,
      );
    } finally {
      run.dispose();
    }
  }
});
