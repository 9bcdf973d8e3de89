// Either GEMM family behind one name: an instance of the sm_90a catalog or of the sm_80 one (in
// either build), found by name, and built into the family's typed kernel.
import type { Compiler, Device } from '@tilekit/runtime';
import { findGemmInstance } from './gemmCatalog.ts';
import { GemmInstance } from './gemmInstance.ts';
import { GemmKernel } from './gemmLauncher.ts';
import { findGemmSm80Instance } from './sm80/gemmSm80Catalog.ts';
import type { GemmSm80Instance } from './sm80/gemmSm80Instance.ts';
import { GemmSm80Kernel } from './sm80/gemmSm80Launcher.ts';

/** An instance of either family: sm_90a (`GemmInstance`) or sm_80 (`GemmSm80Instance`). */
export type AnyGemmInstance = GemmInstance | GemmSm80Instance;

/** A loaded kernel of either family; both have `prepare(problem, buffers)`, `run`, `resources` and `dispose`. */
export type AnyGemmKernel = GemmKernel | GemmSm80Kernel;

/**
 * The instance named `name` in the sm_90a catalog or in the sm_80 catalog's sm_80 or sm_90a build
 * (names are unique across all three, tested), or undefined.
 */
export function findAnyGemmInstance(name: string): AnyGemmInstance | undefined {
  return findGemmInstance(name) ?? findGemmSm80Instance(name);
}

/** The family's kernel for `instance`: `GemmKernel.build` (sm_90a) or `GemmSm80Kernel.build` (sm_80). */
export function buildGemmKernel(
  instance: AnyGemmInstance,
  options: { readonly device: Device; readonly compiler: Compiler },
): Promise<AnyGemmKernel> {
  return instance instanceof GemmInstance ? GemmKernel.build(instance, options) : GemmSm80Kernel.build(instance, options);
}
