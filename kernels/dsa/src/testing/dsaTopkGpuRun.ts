// The GPU run of one top-k case, shared by the top-k GPU specs: upload the rows (and lengths, block
// table), pack through the launcher (optionally repacked for another instance), launch, read back
// and compare with dsaTopkReference through the output hook.
import assert from 'node:assert/strict';
import { Device, type DeviceBuffer } from '@tilekit/runtime';
import { dsaTopkReference, type DsaTopkRows } from '../reference/dsaTopkReference.ts';
import { dsaTopkIndexOutput } from '../topk/dsaTopkIndexOutput.ts';
import {
  checkDsaTopkConfig,
  packDsaTopk,
  type DsaTopkAnyInstance,
  type DsaTopkBuffers,
  type DsaTopkKernel,
  type DsaTopkPackedLaunch,
} from '../topk/dsaTopkLauncher.ts';
import { dsaTopkOutputReference, type DsaTopkPageTable } from '../topk/dsaTopkOutput.ts';
import { dsaTopkPageTableOutput } from '../topk/dsaTopkPageTableOutput.ts';

/** Device buffers of one case, freed by `dispose`. */
export class DsaTopkCaseBuffers {
  readonly owned: DeviceBuffer[] = [];
  readonly device: Device;

  constructor(device: Device) {
    this.device = device;
  }

  /** `host` at byte `offset` of a fresh zeroed buffer (a misaligned start when offset is not a multiple of 16). */
  upload(host: ArrayBufferView, offset = 0): DeviceBuffer {
    const root = this.device.alloc(Math.max(1, host.byteLength + offset)).fill(0);
    this.owned.push(root);
    const view = offset === 0 ? root : root.view(offset, host.byteLength);
    return view.copyFromHost(new Uint8Array(host.buffer, host.byteOffset, host.byteLength));
  }

  /** An output buffer filled with 0xa5 (a kernel that skips a slot leaves a recognisable value). */
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

/** `p` packed again for `instance` (every top-k instance declares the same parameters). */
export function repackDsaTopk(p: DsaTopkPackedLaunch, instance: DsaTopkAnyInstance, rows: number): DsaTopkPackedLaunch {
  const l = instance.launch(rows);
  const args = instance.signature.pack(p.instance.signature.unpack(p.args.bytes));
  return { instance, grid: l.grid, block: l.block, sharedBytes: l.sharedBytes, args };
}

/** The first differing entry of two selections, as `N rows differ; first: row r slot s: got x, expected y`. */
export function dsaTopkFirstMismatch(got: Int32Array, want: Int32Array, k: number): string | undefined {
  const i = got.findIndex((v, j) => v !== want[j]);
  if (i < 0) return undefined;
  const wrongRows = new Set(
    Array.from(got.keys())
      .filter((j) => got[j] !== want[j])
      .map((j) => Math.floor(j / k)),
  ).size;
  return `${wrongRows} rows differ; first: row ${Math.floor(i / k)} slot ${i % k}: got ${got[i]}, expected ${want[i]}`;
}

/** One case's rows, page table and logits offset. */
export interface DsaTopkGpuRows {
  readonly label: string;
  readonly rows: DsaTopkRows;
  readonly table?: DsaTopkPageTable | undefined;
  readonly logitsOffset?: number | undefined;
}

/**
 * Runs `c` through packDsaTopk (or, with `pick`, the instance it names for the dispatched launch),
 * kernels from `kernelFor`, and asserts the output equals the reference's; returns a one-line note.
 */
export async function runDsaTopkGpuRows(
  c: DsaTopkGpuRows,
  kernelFor: (instance: DsaTopkAnyInstance) => Promise<DsaTopkKernel>,
  pick?: (p: DsaTopkPackedLaunch) => DsaTopkAnyInstance,
): Promise<string> {
  const { rows, table } = c;
  const config = checkDsaTopkConfig({
    rows: rows.rows,
    rowStride: rows.rowStride,
    k: rows.k,
    ...(table === undefined ? {} : { pageTable: { rowsPerSequence: table.rowsPerSequence, maxPages: table.maxPages } }),
  });
  const device = Device.open(0);
  const mem = new DsaTopkCaseBuffers(device);
  try {
    const out = mem.output(rows.rows * rows.k * 4);
    const buffers: DsaTopkBuffers = {
      logits: mem.upload(rows.logits, c.logitsOffset ?? 0),
      out,
      ...(rows.lengths === undefined ? {} : { lengths: mem.upload(Int32Array.from(rows.lengths)) }),
      ...(table === undefined ? {} : { blockTable: mem.upload(Int32Array.from(table.blockTable)) }),
    };
    const dispatched = packDsaTopk(config, buffers);
    const packed = pick === undefined ? dispatched : repackDsaTopk(dispatched, pick(dispatched), rows.rows);
    const kernel = await kernelFor(packed.instance);
    kernel.launch(packed);
    device.synchronize();
    const got = new Int32Array(rows.rows * rows.k);
    out.copyToHost(got);
    const hook = table === undefined ? dsaTopkIndexOutput : dsaTopkPageTableOutput;
    const want = dsaTopkOutputReference(dsaTopkReference(rows), rows.k, hook, table);
    const wrong = dsaTopkFirstMismatch(got, want, rows.k);
    assert.equal(wrong, undefined, `${c.label}: ${wrong}`);
    return `${packed.instance.name}: ${rows.rows} rows equal (${kernel.resources.registers} regs)`;
  } finally {
    mem.dispose();
  }
}
