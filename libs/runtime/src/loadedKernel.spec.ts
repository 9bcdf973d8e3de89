import type { AnyKernelSignature } from '@tilekit/codegen';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CompileRequest, CompileResult, Compiler } from './compiler.ts';
import { Device } from './device.ts';
import { kernelArgs } from './kernelArgs.ts';
import type { LoadedInstance } from './kernelInstance.ts';
import { LoadedKernel, type KernelLaunchGeometry, type LoadableInstance } from './loadedKernel.ts';
import { NO_RESOURCES } from './ptxasInfo.ts';
import type { Stream } from './stream.ts';
import { installFakeAddon, uninstallFakeAddon, type FakeAddon } from './testing/fakeAddon.ts';

const ELF = new Uint8Array([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0x33]);
const DEFAULT_MAX_DYNAMIC = 49_152;

/** A compiler that records its requests and returns a fixed cubin and resources. */
function fakeCompiler(requests: CompileRequest[]): Compiler {
  return {
    kind: 'nvcc',
    version: () => Promise.resolve('fake'),
    compile: (request) => {
      requests.push(request);
      const resources = { ...NO_RESOURCES, registers: 40 };
      return Promise.resolve({
        cubin: ELF,
        log: '',
        resources,
        functions: { [request.name]: resources },
        resourcesReported: true,
      } as CompileResult);
    },
  };
}

/** One `int` parameter at offset 0, as the fake kernel declares it. */
function instance(arch: string, sharedBytes: number): LoadableInstance {
  const signature = { target: { arch }, layout: { fields: [{ offset: 0, size: 4 }] } } as unknown as AnyKernelSignature;
  return { name: 'probe', signature, sharedBytes, source: () => 'extern "C" __global__ void probe(int) {}' };
}

class ProbeKernel extends LoadedKernel<LoadableInstance> {
  static async build(inst: LoadableInstance, device: Device, compiler: Compiler): Promise<ProbeKernel> {
    const loaded: LoadedInstance = await LoadedKernel.loadWith(inst, { device, compiler, flags: ['-lineinfo'] });
    return new ProbeKernel(inst, loaded, device);
  }

  enqueuer(launch: KernelLaunchGeometry, stream?: Stream): () => void {
    return this.enqueue(
      launch,
      kernelArgs((b) => b.i32(7)),
      stream,
    );
  }
}

let fake: FakeAddon;
let device: Device;

beforeEach(() => {
  fake = installFakeAddon();
  fake.kernels.set('probe', { params: [{ offset: 0, size: 4 }] });
  device = Device.open(0);
});
afterEach(() => uninstallFakeAddon());

describe('LoadedKernel', () => {
  it('compiles with the given flags for the device arch, opts in to the dynamic shared memory it uses, and enqueues only when called', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 200_000 }), fc.integer({ min: 1, max: 1024 }), async (sharedBytes, gridX) => {
        // A fresh fake driver per run: a kernel attribute set by an earlier run must not leak into this one.
        uninstallFakeAddon();
        fake = installFakeAddon();
        fake.kernels.set('probe', { params: [{ offset: 0, size: 4 }] });
        device = Device.open(0);
        const requests: CompileRequest[] = [];
        const kernel = await ProbeKernel.build(instance(device.arch, sharedBytes), device, fakeCompiler(requests));
        expect(requests.map((r) => [r.name, r.arch, r.flags])).toEqual([['probe', device.arch, ['-lineinfo']]]);
        expect(kernel.resources.registers).toBe(40);
        // No opt-in without dynamic shared memory: the driver's default limit stays.
        expect(kernel.kernel.attributes.maxDynamicSharedBytes).toBe(sharedBytes > 0 ? sharedBytes : DEFAULT_MAX_DYNAMIC);
        const before = fake.launches.length;
        const launch = kernel.enqueuer({ grid: [gridX, 2], block: 128, sharedBytes });
        expect(fake.launches).toHaveLength(before);
        launch();
        expect(fake.launches.slice(before)).toMatchObject([{ kernel: 'probe', grid: [gridX, 2, 1], block: [128, 1, 1], sharedBytes }]);
        kernel.dispose();
        expect(kernel.module.disposed).toBe(true);
      }),
      { numRuns: 25 },
    );
  });

  it('refuses a device of another arch before compiling', async () => {
    const requests: CompileRequest[] = [];
    await expect(ProbeKernel.build(instance('sm_80', 1024), device, fakeCompiler(requests))).rejects.toThrow(
      /device: must be a sm_80 device for probe/,
    );
    expect(requests).toHaveLength(0);
  });
});
