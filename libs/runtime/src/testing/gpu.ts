import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CompileResult } from '../compiler.ts';
import type { CudaModule } from '../cudaModule.ts';
import { Device } from '../device.ts';
import type { Kernel } from '../kernel.ts';
import { kernelArgs } from '../kernelArgs.ts';
import { NvccCompiler } from '../nvccCompiler.ts';
import { probe } from '../probe.ts';
import { AXPY_SOURCE } from './kernelSources.ts';

/**
 * Shared setup for `*.gpu.spec.ts` (node:test): `gpu.options` skips every test with the probe's
 * reason when no CUDA device is usable, so the runner can count and report the skips. Kernels
 * are compiled with nvcc for the device's arch into `$TILEKIT_CACHE_DIR` (or a temp dir).
 */
const probed = probe();
// Short on purpose: the runner prints the full probe reason once.
const skipReason = probed.driver && probed.deviceCount > 0 ? false : 'no CUDA device';

let compiler: NvccCompiler | undefined;
const modules = new Map<string, Promise<{ result: CompileResult; module: CudaModule }>>();

export const gpu = {
  /** Test options: `{ skip: 'no CUDA device: …' }` without a device, else `{}`. */
  options: skipReason === false ? {} : { skip: skipReason },
  probe: probed,

  device(): Device {
    return Device.open(0);
  },

  /** Compiles `source` with nvcc for device 0 (once per source) and loads it. */
  async module(source: string, name: string, flags: readonly string[] = []): Promise<{ result: CompileResult; module: CudaModule }> {
    const key = JSON.stringify([source, name, flags]);
    let entry = modules.get(key);
    if (!entry) {
      compiler ??= new NvccCompiler({
        cacheDir: process.env['TILEKIT_CACHE_DIR'] || mkdtempSync(join(tmpdir(), 'tilekit-gpu-tests-')),
      });
      const device = Device.open(0);
      entry = compiler
        .compile({ source, name, arch: device, flags })
        .then((result) => ({ result, module: device.loadModule(result.cubin) }));
      modules.set(key, entry);
    }
    return entry;
  },

  async kernel(source: string, name: string, flags: readonly string[] = []): Promise<Kernel> {
    return (await gpu.module(source, name, flags)).module.getKernel(name);
  },

  /**
   * Proves the context still works: runs axpy on 1000 elements and checks every result exactly
   * (small integers, so float arithmetic is exact).
   */
  async expectUsable(): Promise<void> {
    const device = gpu.device();
    const kernel = await gpu.kernel(AXPY_SOURCE, 'axpy');
    const n = 1000;
    const x = Float32Array.from({ length: n }, (_, i) => i % 97);
    const y = Float32Array.from({ length: n }, (_, i) => (i * 7) % 31);
    const dx = device.upload(x);
    const dy = device.upload(y);
    try {
      kernel.launch(
        { grid: Math.ceil(n / 128), block: 128 },
        kernelArgs((b) => b.f32(3).pointer(dx).pointer(dy).i32(n)),
      );
      const out = dy.copyToHost(new Float32Array(n));
      for (let i = 0; i < n; i += 1) assert.equal(out[i], 3 * x[i]! + y[i]!, `axpy[${i}]`);
    } finally {
      dx.dispose();
      dy.dispose();
    }
  },
};

/** Calls `fn` and returns what it threw (fails when it does not throw). */
export async function thrown(fn: () => unknown): Promise<unknown> {
  try {
    await fn();
  } catch (error) {
    return error;
  }
  assert.fail('expected an exception');
}
