// One FmhaBwdKernel per backward instance, built on first use and shared by every runner given the
// memo: typed as the runners' generic `buildKernel`, so callers need no cast.
import { buildOncePerInstance, type Compiler, type Device } from '@tilekit/runtime';
import { FmhaBwdKernel, type FmhaBwdKernelInstance } from './fmhaBwdKernel.ts';

/** A memo of backward kernels: `build(instance)` compiles and loads an instance once; `builds()` lists the pending builds. */
export interface FmhaBwdKernelMemo {
  <I extends FmhaBwdKernelInstance>(instance: I): Promise<FmhaBwdKernel<I>>;
  builds(): Promise<FmhaBwdKernel>[];
}

/**
 * `FmhaBwdKernel.build` memoised per instance name (`buildOncePerInstance`), on `device` with
 * `compiler` (each a value, or a function called at the first build: a GPU test opens its device
 * lazily). The memo keeps the instance a runner asked for, so `FmhaBwdKernel<I>` is what it gets.
 */
export function buildFmhaBwdKernelsOnce(options: {
  readonly device: Device | (() => Device);
  readonly compiler: Compiler | (() => Compiler);
}): FmhaBwdKernelMemo {
  const value = <T>(x: T | (() => T)): T => (typeof x === 'function' ? (x as () => T)() : x);
  // async: a device that cannot open rejects the build (and stays memoised) instead of throwing at the call.
  const memo = buildOncePerInstance(async (instance: FmhaBwdKernelInstance) =>
    FmhaBwdKernel.build(instance, { device: value(options.device), compiler: value(options.compiler) }),
  );
  // Each memo entry was built from the very instance it is looked up by: its kernel carries that instance's type.
  return memo as FmhaBwdKernelMemo;
}
