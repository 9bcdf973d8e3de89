import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ArgumentError } from '@tilekit/numeric';
import { CudaGraph } from './cudaGraph.ts';
import type { DeviceBuffer } from './deviceBuffer.ts';
import type { Kernel } from './kernel.ts';
import { kernelArgs } from './kernelArgs.ts';
import type { Stream } from './stream.ts';
import { gpu, thrown } from './testing/gpu.ts';
import { ADD_ONE_SOURCE } from './testing/kernelSources.ts';

const N = 1000;
const BLOCK = 128;

function addOne(kernel: Kernel, x: DeviceBuffer, stream: Stream): void {
  kernel.launch(
    { grid: Math.ceil(N / BLOCK), block: BLOCK, stream },
    kernelArgs((b) => b.pointer(x).i32(N)),
  );
}

function expectGrownBy(x: DeviceBuffer, initial: Int32Array, by: number, what: string): void {
  const out = x.copyToHost(new Int32Array(N));
  for (let i = 0; i < N; i += 1) assert.equal(out[i], initial[i]! + by, `${what}: x[${i}]`);
}

test('runtime/gpu: a captured graph of two add_one launches runs nothing at capture and adds 2 per replay', gpu.options, async () => {
  const device = gpu.device();
  const kernel = await gpu.kernel(ADD_ONE_SOURCE, 'add_one');
  const initial = Int32Array.from({ length: N }, (_, i) => i * 3 - 500);
  const x = device.upload(initial);
  const stream = device.createStream({ nonBlocking: true });
  const other = device.createStream({ nonBlocking: true });
  const graph = CudaGraph.capture(stream, () => {
    addOne(kernel, x, stream);
    addOne(kernel, x, stream);
  });
  try {
    assert.deepEqual(graph.kernels, ['add_one', 'add_one']);
    stream.synchronize();
    expectGrownBy(x, initial, 0, 'after capture');
    for (let replay = 0; replay < 3; replay += 1) graph.launch();
    stream.synchronize();
    expectGrownBy(x, initial, 6, 'after 3 replays');
    graph.launch(other);
    other.synchronize();
    expectGrownBy(x, initial, 8, 'after a 4th replay on another stream');
  } finally {
    graph.dispose();
    graph.dispose();
    other.dispose();
    stream.dispose();
    x.dispose();
  }
});

test('runtime/gpu: the legacy default stream is refused before the driver is asked to capture', gpu.options, async () => {
  let ran = false;
  const error = await thrown(() =>
    CudaGraph.capture(undefined as unknown as Stream, () => {
      ran = true;
    }),
  );
  assert.ok(error instanceof ArgumentError, `expected ArgumentError, got ${String(error)}`);
  assert.equal(error.argument, 'stream');
  assert.match(error.message, /legacy default stream cannot be captured/);
  assert.equal(ran, false);
  await gpu.expectUsable();
});

test('runtime/gpu: a body that throws ends the capture; its launch never runs and the stream works on', gpu.options, async () => {
  const device = gpu.device();
  const kernel = await gpu.kernel(ADD_ONE_SOURCE, 'add_one');
  const initial = Int32Array.from({ length: N }, (_, i) => i);
  const x = device.upload(initial);
  const stream = device.createStream({ nonBlocking: true });
  try {
    const boom = new Error('boom');
    const error = await thrown(() =>
      CudaGraph.capture(stream, () => {
        addOne(kernel, x, stream);
        throw boom;
      }),
    );
    assert.equal(error, boom);
    addOne(kernel, x, stream);
    stream.synchronize();
    expectGrownBy(x, initial, 1, 'one direct launch after the failed capture');
    const graph = CudaGraph.capture(stream, () => addOne(kernel, x, stream), { mode: 'threadLocal' });
    graph.launch();
    graph.dispose();
    assert.throws(() => graph.launch(), /CudaGraph: used after dispose\(\)/);
    stream.synchronize();
    expectGrownBy(x, initial, 2, 'after a replay of a new capture');
  } finally {
    stream.dispose();
    x.dispose();
  }
});
