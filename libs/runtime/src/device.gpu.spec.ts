import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { findAddon, loadAddon } from './addon.ts';
import { archForComputeCapability } from './arch.ts';
import { Device } from './device.ts';
import { kernelArgs } from './kernelArgs.ts';
import { probe } from './probe.ts';
import { gpu } from './testing/gpu.ts';
import { SPIN_SOURCE } from './testing/kernelSources.ts';

test('runtime/gpu: probe sees the driver and the device', gpu.options, (t) => {
  const p = probe();
  t.diagnostic(`probe: ${JSON.stringify(p)}`);
  assert.equal(p.addon, true);
  assert.equal(p.driver, true);
  assert.ok(p.deviceCount >= 1);
  assert.ok((p.driverVersion ?? 0) >= 12000, `driver version ${p.driverVersion}`);
  assert.equal(p.reason, undefined);
  assert.equal(Device.count(), p.deviceCount);
});

test('runtime/gpu: device attributes are those of a real GPU', gpu.options, (t) => {
  const device = gpu.device();
  t.diagnostic(
    `device: ${JSON.stringify({
      name: device.name,
      cc: device.computeCapability,
      arch: device.arch,
      smCount: device.smCount,
      sharedMemoryPerBlockOptin: device.sharedMemoryPerBlockOptin,
      l2CacheBytes: device.l2CacheBytes,
      totalMemoryBytes: device.totalMemoryBytes,
      driverVersion: device.driverVersion,
    })}`,
  );
  assert.ok(device.name.length > 0);
  assert.equal(device.arch, archForComputeCapability(device.computeCapability));
  assert.ok(device.smCount > 0);
  assert.ok(device.sharedMemoryPerBlockOptin >= device.sharedMemoryPerBlock);
  assert.equal(device.sharedMemoryPerBlock, 48 * 1024);
  assert.ok(device.l2CacheBytes > 0);
  assert.ok(device.totalMemoryBytes > 2 ** 30);
  assert.equal(device.maxThreadsPerBlock, 1024);
  assert.deepEqual(device.maxBlockDim, [1024, 1024, 64]);
  assert.deepEqual(device.maxGridDim, [2 ** 31 - 1, 65_535, 65_535]);
  assert.equal(device.warpSize, 32);
  if (device.computeCapability.major === 9 && device.computeCapability.minor === 0) {
    assert.equal(device.arch, 'sm_90a');
    assert.equal(device.clusterLaunch, true);
    assert.equal(device.sharedMemoryPerBlockOptin, 227 * 1024);
  }
});

test('runtime/gpu: every call makes the primary context current on its thread', gpu.options, () => {
  const native = loadAddon();
  const device = gpu.device();
  native.clearCurrentContext();
  assert.equal(native.isContextCurrent(device.ordinal), false);
  const buffer = device.alloc(64);
  assert.equal(native.isContextCurrent(device.ordinal), true);
  native.clearCurrentContext();
  buffer.fill(7);
  assert.equal(buffer.copyToHost()[63], 7);
  buffer.dispose();
});

test('runtime/gpu: the addon works from a worker thread, which gets the context made current', gpu.options, async () => {
  const device = gpu.device();
  // Plain CommonJS in the worker: load the same addon and round-trip bytes through the device.
  const code = `
    const { parentPort, workerData } = require('node:worker_threads');
    const native = require(workerData.addon);
    const before = native.isContextCurrent(workerData.ordinal);
    const ptr = native.memAlloc(workerData.ordinal, 4097);
    native.memsetD8(workerData.ordinal, ptr, 0x3c, 4097);
    const host = new Uint8Array(4097);
    native.memcpyDtoH(workerData.ordinal, host, ptr);
    native.memFree(workerData.ordinal, ptr);
    parentPort.postMessage({ before, after: native.isContextCurrent(workerData.ordinal), ok: host.every((b) => b === 0x3c) });`;
  const result = await new Promise<{ before: boolean; after: boolean; ok: boolean }>((resolve, reject) => {
    const worker = new Worker(code, { eval: true, workerData: { addon: findAddon(), ordinal: device.ordinal } });
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  assert.deepEqual(result, { before: false, after: true, ok: true });
  await gpu.expectUsable();
});

test('runtime/gpu: synchronizeAsync waits on a worker thread (context made current there)', gpu.options, async () => {
  const device = gpu.device();
  const kernel = await gpu.kernel(SPIN_SOURCE, 'spin');
  const done = device.alloc(4).fill(0);
  const stream = device.createStream();
  const end = device.createEvent();
  kernel.launch(
    { grid: 1, block: 32, stream },
    kernelArgs((b) => b.i64(20_000_000n).pointer(done)),
  );
  end.record(stream);
  await stream.synchronizeAsync();
  assert.equal(end.isComplete(), true);
  assert.equal(stream.isIdle(), true);
  assert.equal(new Int32Array(done.copyToHost().buffer)[0], 1);
  stream.dispose();
  end.dispose();
  done.dispose();
});
