// Faults are reported, never hidden (issue 17): an allocation larger than the device is a
// DeviceOutOfMemoryError naming it, and the context stays usable; a kernel that writes through a
// bad pointer is a DeviceFaultError naming that kernel at the next synchronize. The fault poisons
// the context for the rest of the process, so it runs last, in a file of its own.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DeviceFaultError, DeviceOutOfMemoryError } from './cudaError.ts';
import { kernelArgs } from './kernelArgs.ts';
import { gpu } from './testing/gpu.ts';

const FAULT_SOURCE = `extern "C" __global__ void tk_deliberate_fault(int* p) { p[threadIdx.x * 1024] = 1; }
extern "C" __global__ void tk_fill(int* p, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] = i; }
`;

test(
  'runtime/gpu: an allocation larger than the device is a DeviceOutOfMemoryError naming it; the context stays usable',
  gpu.options,
  async () => {
    const device = gpu.device();
    const tooMuch = device.totalMemoryBytes * 2;
    assert.throws(
      () => device.alloc(tooMuch, 'deliberately huge buffer'),
      (e: unknown) =>
        e instanceof DeviceOutOfMemoryError && /allocating deliberately huge buffer \(\d+ bytes\); \d+ bytes free/.test(e.message),
    );
    const fill = await gpu.kernel(FAULT_SOURCE, 'tk_fill');
    const out = device.alloc(4 * 100);
    fill.launch(
      { grid: 1, block: 128 },
      kernelArgs((b) => b.pointer(out).i32(100)),
    );
    assert.equal(new Int32Array(out.copyToHost().buffer)[99], 99);
    out.dispose();
  },
);

test(
  'runtime/gpu: a kernel writing through a bad pointer is a DeviceFaultError naming it at the next synchronize',
  gpu.options,
  async () => {
    const device = gpu.device();
    const fault = await gpu.kernel(FAULT_SOURCE, 'tk_deliberate_fault');
    device.synchronize();
    fault.launch(
      { grid: 1, block: 32 },
      kernelArgs((b) => b.pointer(16n)),
    );
    assert.throws(
      () => device.synchronize(),
      (e: unknown) =>
        e instanceof DeviceFaultError &&
        e.sticky &&
        e.kernels.includes('tk_deliberate_fault') &&
        /device fault after launching tk_deliberate_fault/.test(e.message),
    );
  },
);
