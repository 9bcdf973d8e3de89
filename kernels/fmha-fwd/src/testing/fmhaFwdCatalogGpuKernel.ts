// The GPU specs' way to run a case on an instance of a catalog: the instance of the case's dtype,
// head dims and mask kind, built once per instance and launched with tensor maps the driver encodes.
// Harness code for *.gpu.spec.ts; not exported by the package.
import assert from 'node:assert/strict';
import { buildOncePerInstance, Device, encodeTensorMapTiled } from '@tilekit/runtime';
import { gpuTestCompiler } from '@tilekit/runtime/testing';
import type { FmhaFwdInstance } from '@tilekit/fmha-launch';
import { FmhaFwdKernel } from '@tilekit/fmha-launch';
import type { FmhaFwdGpuCase, FmhaFwdGpuKernel } from '@tilekit/fmha-launch/testing';

/** Builds each instance once (device 0, the GPU specs' compiler cache). */
export const fmhaFwdGpuKernelFor = buildOncePerInstance((instance: FmhaFwdInstance) =>
  FmhaFwdKernel.build(instance, { device: Device.open(0), compiler: gpuTestCompiler('fmha-gpu') }),
);

/** The one-pass instance of `catalog` for case `c` (its dtype, d, d_v and mask kind); fails the test when there is none. */
export function fmhaFwdCatalogInstanceFor(catalog: readonly FmhaFwdInstance[], c: FmhaFwdGpuCase): FmhaFwdInstance {
  const mask = c.mask.kind === 'none' ? 'none' : 'window';
  const found = catalog.find(
    (i) =>
      i.policy.dtype === c.dtype &&
      i.policy.headDim === c.d &&
      i.policy.headDimV === (c.dv ?? c.d) &&
      i.policy.mask === mask &&
      i.policy.scoreModifier?.tag === c.score &&
      !i.policy.splitKv,
  );
  assert.ok(found, `no instance for ${c.label}`);
  return found;
}

/** The kernel of `instance` as `runFmhaFwdGpuCase` launches it. */
export async function fmhaFwdGpuKernelOf(instance: FmhaFwdInstance): Promise<FmhaFwdGpuKernel> {
  const kernel = await fmhaFwdGpuKernelFor(instance);
  return {
    name: kernel.instance.name,
    launch: (problem, buffers, device) => kernel.prepare(problem, buffers, (o) => encodeTensorMapTiled(device, o)).launch(),
  };
}
