import { afterEach, describe, expect, it } from 'vitest';
import { CudaError, cudaErrorFromDriver, DeviceFaultError, DeviceOutOfMemoryError } from './cudaError.ts';
import { Device } from './device.ts';
import { kernelArgs } from './kernelArgs.ts';
import { unsettledLaunches } from './launchJournal.ts';
import { installFakeAddon, uninstallFakeAddon } from './testing/fakeAddon.ts';

// Faults are reported, never hidden: an out-of-memory names the allocation, and a sticky device
// fault (reported by whichever call synchronizes next) names the kernels launched since the last
// completed synchronize. The GPU side (a deliberately faulting kernel) is deviceFaults.gpu.spec.ts.

const ELF = new Uint8Array([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0x33]);
afterEach(() => uninstallFakeAddon());

describe('out of memory', () => {
  it('names the allocation by label and size, says what was free, and stays a CudaError', () => {
    installFakeAddon({ totalMemory: 1 << 20 });
    const device = Device.open(0);
    const kept = device.alloc(1 << 19);
    let error: unknown;
    try {
      device.alloc(1 << 20, 'dq_acc workspace');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(DeviceOutOfMemoryError);
    expect(error).toBeInstanceOf(CudaError);
    const oom = error as DeviceOutOfMemoryError;
    expect(oom.message).toMatch(/allocating dq_acc workspace \(1048576 bytes\); 524288 bytes free/);
    expect(oom.cudaName).toBe('CUDA_ERROR_OUT_OF_MEMORY');
    expect(oom.sticky).toBe(false);
    expect(() => device.alloc(1024).dispose()).not.toThrow();
    kept.dispose();
  });
});

describe('device faults', () => {
  it('a sticky error names the kernels launched since the last synchronize; a completed synchronize clears them', () => {
    const fake = installFakeAddon();
    fake.kernels.set('tk_fault', { params: [{ offset: 0, size: 8 }] });
    fake.kernels.set('tk_fine', { params: [] });
    const device = Device.open(0);
    const module = device.loadModule(ELF);
    module.getKernel('tk_fine').launch(
      { grid: 1, block: 32 },
      kernelArgs(() => undefined),
    );
    device.synchronize();
    expect(unsettledLaunches().count).toBe(0);
    module.getKernel('tk_fault').launch(
      { grid: 1, block: 32 },
      kernelArgs((b) => b.pointer(16n)),
    );
    fake.contextSynchronize = () => {
      throw cudaErrorFromDriver('cuCtxSynchronize', 700, 'CUDA_ERROR_ILLEGAL_ADDRESS', 'an illegal memory access was encountered');
    };
    let error: unknown;
    try {
      device.synchronize();
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(DeviceFaultError);
    const fault = error as DeviceFaultError;
    expect(fault.kernels).toEqual(['tk_fault']);
    expect(fault.sticky).toBe(true);
    expect(fault.message).toMatch(
      /cuCtxSynchronize failed: CUDA_ERROR_ILLEGAL_ADDRESS.*device fault after launching tk_fault.*restart the process/,
    );
  });

  it('non-sticky driver errors stay plain CudaErrors', () => {
    const error = cudaErrorFromDriver('cuMemcpyDtoH_v2', 1, 'CUDA_ERROR_INVALID_VALUE', 'invalid argument');
    expect(error).toBeInstanceOf(CudaError);
    expect(error).not.toBeInstanceOf(DeviceFaultError);
  });

  it('keeps the last 16 suspects of a long unsynchronized run and says how many there were', () => {
    const fake = installFakeAddon();
    fake.kernels.set('k', { params: [] });
    const device = Device.open(0);
    const kernel = device.loadModule(ELF).getKernel('k');
    device.synchronize();
    for (let i = 0; i < 20; i++)
      kernel.launch(
        { grid: 1, block: 1 },
        kernelArgs(() => undefined),
      );
    const fault = cudaErrorFromDriver(
      'cuStreamSynchronize',
      719,
      'CUDA_ERROR_LAUNCH_FAILED',
      'unspecified launch failure',
    ) as DeviceFaultError;
    expect(fault.kernels).toHaveLength(16);
    expect(fault.message).toContain('(the last 16 of 20)');
    device.synchronize();
  });
});
