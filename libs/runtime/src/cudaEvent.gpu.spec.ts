import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CudaEvent } from './cudaEvent.ts';
import { timeLaunches } from './timeLaunches.ts';
import { kernelArgs } from './kernelArgs.ts';
import { gpu } from './testing/gpu.ts';
import { SPIN_SOURCE } from './testing/kernelSources.ts';

test('runtime/gpu: events measure the GPU time of a launch on a stream', gpu.options, async (t) => {
  const device = gpu.device();
  const kernel = await gpu.kernel(SPIN_SOURCE, 'spin');
  const done = device.alloc(4).fill(0);
  const stream = device.createStream({ nonBlocking: true });
  const start = device.createEvent();
  const end = device.createEvent();
  start.record(stream);
  // About 5 ms at ~2 GHz; the assertion only needs "more than nothing".
  kernel.launch(
    { grid: 1, block: 32, stream },
    kernelArgs((b) => b.i64(10_000_000n).pointer(done)),
  );
  end.record(stream);
  const ms = CudaEvent.elapsedMs(start, end);
  t.diagnostic(`spin(1e7 cycles): ${ms.toFixed(3)} ms`);
  assert.ok(ms > 0, `elapsed ${ms}`);
  assert.ok(end.isComplete());
  assert.equal(new Int32Array(done.copyToHost().buffer)[0], 1);
  const idle = device.createEvent().record(stream);
  idle.synchronize();
  assert.ok(end.elapsedSince(start) === ms);
  for (const e of [start, end, idle]) e.dispose();
  stream.dispose();
  done.dispose();
});

test('runtime/gpu: timeLaunches times each of `repeat` launches after `warmup` untimed ones', gpu.options, async (t) => {
  const device = gpu.device();
  const kernel = await gpu.kernel(SPIN_SOURCE, 'spin');
  const done = device.alloc(4).fill(0);
  const stream = device.createStream({ nonBlocking: true });
  let launches = 0;
  const launch = () => {
    launches++;
    kernel.launch(
      { grid: 1, block: 32, stream },
      kernelArgs((b) => b.i64(1_000_000n).pointer(done)),
    );
  };
  const times = timeLaunches(device, launch, { warmup: 2, repeat: 5, stream });
  t.diagnostic(`spin(1e6 cycles) x5: ${times.map((ms) => ms.toFixed(3)).join(', ')} ms`);
  assert.equal(launches, 7);
  assert.equal(times.length, 5);
  for (const ms of times) assert.ok(ms > 0, `elapsed ${ms}`);
  assert.throws(() => timeLaunches(device, launch, { warmup: -1, repeat: 1 }), /warmup: must be a non-negative integer/);
  stream.synchronize();
  stream.dispose();
  done.dispose();
});
