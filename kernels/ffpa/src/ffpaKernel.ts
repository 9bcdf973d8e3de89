// FFPA's two code paths as one kind of kernel: the sm_90a instances (wgmma + TMA, FFPA_CATALOG) and
// the sm_80 ones (FFPA level L1 on cp.async + mma.sync, FFPA_SM80_CATALOG; built for sm_90a they run
// on Hopper too). The plan, launcher and runner take either through these functions.
import type { FmhaFwdLaunchProblem } from '@tilekit/fmha';
import {
  FmhaFwdInstance,
  FmhaFwdKernel,
  FmhaFwdSm80Kernel,
  FmhaFwdSm80LoopInstance,
  fmhaFwdSm80Unsupported,
  fmhaFwdUnsupported,
  type FmhaFwdBuffers,
  type TensorMapEncoder,
} from '@tilekit/fmha-launch';
import type { Compiler, Device } from '@tilekit/runtime';
import type { FfpaSm80Instance } from './sm80/ffpaSm80Catalog.ts';

/** `sm90`: wgmma, TMA, warp-specialized (up to 512 columns of O per CTA, or a cluster); `sm80`: FFPA L1 (up to 256). */
export type FfpaPath = 'sm90' | 'sm80';

/** An instance of either path. */
export type FfpaInstance = FmhaFwdInstance | FfpaSm80Instance;

/** A loaded kernel of either path. */
export type FfpaKernel = FmhaFwdKernel | FmhaFwdSm80Kernel<FfpaSm80Instance>;

/** The path an instance belongs to. */
export function ffpaPathOf(instance: FfpaInstance): FfpaPath {
  return instance instanceof FmhaFwdSm80LoopInstance ? 'sm80' : 'sm90';
}

/** CTAs per cluster of an instance (the sm_80 path has no clusters: 1). */
export function ffpaClusterCtas(instance: FfpaInstance): number {
  return instance instanceof FmhaFwdInstance ? instance.clusterCtas : 1;
}

/** Why `instance` cannot run the launch problem `p` (its path's predicates); empty when it can. */
export function ffpaInstanceUnsupported(instance: FfpaInstance, p: FmhaFwdLaunchProblem): string[] {
  return instance instanceof FmhaFwdInstance ? fmhaFwdUnsupported(instance, p) : fmhaFwdSm80Unsupported(instance, p);
}

/** Compiles and loads `instance` with its path's kernel class. */
export async function buildFfpaKernel(
  instance: FfpaInstance,
  options: { readonly device: Device; readonly compiler: Compiler },
): Promise<FfpaKernel> {
  return instance instanceof FmhaFwdInstance ? FmhaFwdKernel.build(instance, options) : FmhaFwdSm80Kernel.build(instance, options);
}

/** Validates one launch of `kernel` (its launcher's checks; TMA maps through `encode` on the sm_90a path) and returns `launch`. */
export function prepareFfpaKernelLaunch(
  kernel: FfpaKernel,
  p: FmhaFwdLaunchProblem,
  buffers: FmhaFwdBuffers,
  encode: TensorMapEncoder,
): { launch(): void } {
  return kernel instanceof FmhaFwdSm80Kernel ? kernel.prepare(p, buffers) : kernel.prepare(p, buffers, encode);
}
