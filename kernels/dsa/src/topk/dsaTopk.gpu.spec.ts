// GPU tests of the exact top-k kernel (node:test; run by `npm run test:gpu` on the GPU machine):
// seeded logit rows go through the kernel and its [rows][k] output must equal dsaTopkReference
// (in the output hook's form) bit for bit. Cases (dsaTopkGpuCases): ties and all-equal rows (also
// longer than the candidate list), −∞ runs, NaN, ±0, rows shorter than k, k > rowStride, lengths
// 0/1/negative/past the row/not multiples of 64, rowStride 1 … 131072, k ∈ {1, 7, 2048, 4096} and
// random, misaligned logits (scalar loads), the page-table form with next_n 1 and 2; then prints
// the kernel time (not asserted) for rows 1/32/128 × L 8K/32K/128K at k 2048. Skipped without a GPU.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildOncePerInstance, Device, timeLaunches, type DeviceBuffer } from '@tilekit/runtime';
import { gpu, gpuTestCompiler } from '@tilekit/runtime/testing';
import { dsaTopkReference } from '../reference/dsaTopkReference.ts';
import { dsaTopkGpuCases, dsaTopkGpuPageTable, type DsaTopkGpuCase } from '../testing/dsaTopkGpuCases.ts';
import { dsaTopkLogits } from '../testing/dsaTopkLogits.ts';
import { dsaTopkIndexOutput } from './dsaTopkIndexOutput.ts';
import type { DsaTopkInstance } from './dsaTopkInstance.ts';
import { checkDsaTopkConfig, type DsaTopkKernel, packDsaTopk, type DsaTopkBuffers, type DsaTopkPackedLaunch } from './dsaTopkLauncher.ts';
import { DsaKernel } from '../dsaKernel.ts';
import { dsaTopkOutputReference, type DsaTopkPageTable } from './dsaTopkOutput.ts';
import { dsaTopkPageTableOutput } from './dsaTopkPageTableOutput.ts';

const buildKernel = buildOncePerInstance((instance: DsaTopkInstance) =>
  DsaKernel.build(instance, { device: Device.open(0), compiler: gpuTestCompiler('dsa-topk-gpu') }),
);

/** Device buffers of one case, freed by `dispose`. */
class CaseBuffers {
  readonly owned: DeviceBuffer[] = [];
  readonly device: Device;

  constructor(device: Device) {
    this.device = device;
  }

  upload(host: ArrayBufferView, offset = 0): DeviceBuffer {
    const root = this.device.alloc(Math.max(1, host.byteLength + offset)).fill(0);
    this.owned.push(root);
    const view = offset === 0 ? root : root.view(offset, host.byteLength);
    return view.copyFromHost(new Uint8Array(host.buffer, host.byteOffset, host.byteLength));
  }

  output(bytes: number): DeviceBuffer {
    const b = this.device.alloc(bytes).fill(0xa5);
    this.owned.push(b);
    return b;
  }

  dispose(): void {
    this.device.synchronize();
    for (const b of this.owned) b.dispose();
  }
}

/** The first differing entry of two selections, as `row r slot s: got x, expected y`. */
function firstMismatch(got: Int32Array, want: Int32Array, k: number): string | undefined {
  const i = got.findIndex((v, j) => v !== want[j]);
  if (i < 0) return undefined;
  const row = Math.floor(i / k);
  const wrongRows = new Set(
    Array.from(got.keys())
      .filter((j) => got[j] !== want[j])
      .map((j) => Math.floor(j / k)),
  ).size;
  return `${wrongRows} rows differ; first: row ${row} slot ${i % k}: got ${got[i]}, expected ${want[i]}`;
}

async function runCase(c: DsaTopkGpuCase): Promise<string> {
  const rows = dsaTopkLogits(c.logits);
  const table: DsaTopkPageTable | undefined = c.rowsPerSequence === undefined ? undefined : dsaTopkGpuPageTable(c);
  const config = checkDsaTopkConfig({
    rows: rows.rows,
    rowStride: rows.rowStride,
    k: rows.k,
    ...(table === undefined ? {} : { pageTable: { rowsPerSequence: table.rowsPerSequence, maxPages: table.maxPages } }),
  });
  const device = Device.open(0);
  const mem = new CaseBuffers(device);
  try {
    const out = mem.output(rows.rows * rows.k * 4);
    const buffers: DsaTopkBuffers = {
      logits: mem.upload(rows.logits, c.logitsOffset ?? 0),
      out,
      ...(rows.lengths === undefined ? {} : { lengths: mem.upload(Int32Array.from(rows.lengths)) }),
      ...(table === undefined ? {} : { blockTable: mem.upload(Int32Array.from(table.blockTable)) }),
    };
    const packed = packDsaTopk(config, buffers);
    const kernel = await buildKernel(packed.instance);
    kernel.launch(packed);
    device.synchronize();
    const got = new Int32Array(rows.rows * rows.k);
    out.copyToHost(got);
    const hook = table === undefined ? dsaTopkIndexOutput : dsaTopkPageTableOutput;
    const want = dsaTopkOutputReference(dsaTopkReference(rows), rows.k, hook, table);
    const wrong = firstMismatch(got, want, rows.k);
    assert.equal(wrong, undefined, `${c.label}: ${wrong}`);
    return `${packed.instance.name}: ${rows.rows} rows equal (${kernel.resources.registers} regs)`;
  } finally {
    mem.dispose();
  }
}

for (const c of dsaTopkGpuCases()) {
  test(`kernel-dsa/gpu topk: ${c.label}`, gpu.options, async () => {
    console.log(await runCase(c));
  });
}

/** The median of `timeLaunches` (20 after 5) in µs. */
function medianUs(device: Device, kernel: DsaTopkKernel, packed: DsaTopkPackedLaunch): number {
  const ms = timeLaunches(device, () => kernel.launch(packed), { warmup: 5, repeat: 20 }).sort((x, y) => x - y);
  return ms[10]! * 1000;
}

test('kernel-dsa/gpu topk: time at k 2048, rows 1/32/128 × L 8K/32K/128K (printed, not asserted)', gpu.options, async () => {
  const device = Device.open(0);
  const lines: string[] = [];
  for (const length of [8192, 32768, 131072]) {
    for (const rowCount of [1, 32, 128]) {
      const rows = dsaTopkLogits({ seed: 99, rows: rowCount, rowStride: length, k: 2048, style: 'normal' });
      const mem = new CaseBuffers(device);
      try {
        const config = checkDsaTopkConfig({ rows: rowCount, rowStride: length, k: 2048 });
        const packed = packDsaTopk(config, { logits: mem.upload(rows.logits), out: mem.output(rowCount * 2048 * 4) });
        const kernel = await buildKernel(packed.instance);
        const us = medianUs(device, kernel, packed);
        const gbs = (rowCount * length * 4) / (us * 1e3);
        lines.push(
          `rows ${String(rowCount).padStart(3)} × L ${String(length).padStart(6)}: ${us.toFixed(1).padStart(8)} µs (${gbs.toFixed(0)} GB/s of logits once)`,
        );
      } finally {
        mem.dispose();
      }
    }
  }
  console.log(
    `dsa top-k (${buildKernel.builds().length} kernels built), normal logits, no lengths, median of 20:\n  ${lines.join('\n  ')}`,
  );
});
