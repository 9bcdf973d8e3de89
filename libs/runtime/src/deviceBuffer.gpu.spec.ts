import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { ArgumentError } from '@tilekit/numeric';
import { CudaError } from './cudaError.ts';
import { DisposedError } from './disposal.ts';
import { gpu, thrown } from './testing/gpu.ts';

test('runtime/gpu: host↔device copies of odd sizes round-trip', gpu.options, () => {
  const device = gpu.device();
  for (const size of [1, 3, 4, 5, 255, 4097, 65_537, (1 << 20) + 5]) {
    const bytes = new Uint8Array(randomBytes(size));
    const buffer = device.upload(bytes);
    assert.equal(buffer.bytes, size);
    assert.equal(buffer.ptr % 256n, 0n, 'cuMemAlloc returns 256-byte aligned memory');
    assert.deepEqual(buffer.copyToHost(), bytes, `size ${size}`);
    buffer.dispose();
  }
});

test('runtime/gpu: copies at odd offsets, typed arrays, and through a stream', gpu.options, () => {
  const device = gpu.device();
  const buffer = device.alloc(4099).fill(0);
  const values = Float64Array.from({ length: 11 }, (_, i) => i * 1.25 - 3);
  buffer.copyFromHost(values, { offset: 3 });
  assert.deepEqual(buffer.copyToHost(new Float64Array(11), { offset: 3 }), values);
  const stream = device.createStream();
  const tail = new Uint8Array(randomBytes(97));
  buffer.copyFromHost(tail, { offset: 4002, stream });
  assert.deepEqual(buffer.copyToHost(new Uint8Array(97), { offset: 4002, stream }), tail);
  assert.equal(buffer.copyToHost()[2], 0);
  stream.dispose();
  buffer.dispose();
});

test('runtime/gpu: memset fills exactly the requested range', gpu.options, () => {
  const device = gpu.device();
  const buffer = device.alloc(4097).fill(0x5a);
  buffer.fill(0x01, { offset: 1, bytes: 4095 });
  const host = buffer.copyToHost();
  assert.equal(host[0], 0x5a);
  assert.equal(host[4096], 0x5a);
  assert.ok(host.subarray(1, 4096).every((b) => b === 1));
  buffer.dispose();
});

test('runtime/gpu: views share memory; device↔device copies between views', gpu.options, () => {
  const device = gpu.device();
  const a = device.upload(Uint8Array.from({ length: 4096 }, (_, i) => i & 0xff));
  const b = device.alloc(4096).fill(0);
  const view = a.view(1001, 3);
  assert.equal(view.ptr, a.ptr + 1001n);
  assert.deepEqual([...view.copyToHost()], [1001 & 0xff, 1002 & 0xff, 1003 & 0xff]);
  view.fill(0xee);
  assert.deepEqual([...a.copyToHost().subarray(1000, 1005)], [1000 & 0xff, 0xee, 0xee, 0xee, 1004 & 0xff]);
  b.view(7).copyFrom(a.view(1001, 3));
  assert.deepEqual([...b.copyToHost().subarray(6, 11)], [0, 0xee, 0xee, 0xee, 0]);
  b.copyFrom(a);
  assert.deepEqual(b.copyToHost(), a.copyToHost());
  assert.throws(() => b.copyFrom(a, { srcOffset: 1, bytes: 4096 }), ArgumentError);
  a.dispose();
  assert.throws(() => view.copyToHost(), DisposedError);
  b.dispose();
});

test(
  'runtime/gpu: allocating more than the device has raises CUDA_ERROR_OUT_OF_MEMORY; the context stays usable',
  gpu.options,
  async () => {
    const device = gpu.device();
    const info = device.memoryInfo();
    assert.ok(info.free <= info.total && info.total > 0);
    const error = await thrown(() => device.alloc(device.totalMemoryBytes + 2 ** 30));
    assert.ok(error instanceof CudaError, String(error));
    assert.equal(error.call, 'cuMemAlloc_v2');
    assert.equal(error.cudaName, 'CUDA_ERROR_OUT_OF_MEMORY');
    assert.match(error.message, /^cuMemAlloc_v2 failed: CUDA_ERROR_OUT_OF_MEMORY \(2\)/);
    await gpu.expectUsable();
  },
);
