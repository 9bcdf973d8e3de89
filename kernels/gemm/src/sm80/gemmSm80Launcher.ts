// The typed launcher of the sm_80 GEMM kernels: the same argument checks as the sm_90a launcher
// (checkGemmBuffers), but no tensor maps — the cp.async pipeline takes A, B and C as plain pointers
// with their leading dimensions and batch strides.
import type { PackedArguments } from '@tilekit/codegen';
import type { Compiler, Device } from '@tilekit/runtime';
import type { GemmLaunch } from '../gemmInstance.ts';
import { checkGemmBuffers, LoadedGemmKernel, type GemmBuffers } from '../gemmLauncher.ts';
import type { CheckedGemmProblem, GemmProblem } from '../gemmProblem.ts';
import type { GemmSm80Instance } from './gemmSm80Instance.ts';

/** A validated sm_80 launch: configuration, packed arguments and the problem with its defaults. */
export interface PreparedGemmSm80Launch {
  readonly problem: CheckedGemmProblem;
  readonly launch: GemmLaunch;
  readonly args: PackedArguments;
}

/**
 * Validates a launch of an sm_80 `instance` on `problem` with `buffers` and prepares it: the checks
 * of `checkGemmBuffers` (typed `ArgumentError` naming `problem.<field>`, `a`/`b`/`c`, `activation`,
 * `bias` or `problem` with the instance's broken predicates: 16-byte cp.async rows and addresses,
 * C store width), then the kernel arguments (the buffers' addresses, sizes, strides) are packed.
 */
export function prepareGemmSm80Launch(instance: GemmSm80Instance, problem: GemmProblem, buffers: GemmBuffers): PreparedGemmSm80Launch {
  const checked = checkGemmBuffers(instance, problem, buffers);
  const args = instance.signature.pack(instance.args(checked, buffers.a.ptr, buffers.b.ptr, buffers.c.ptr, buffers.bias?.ptr));
  return { problem: checked, launch: instance.launch(checked), args };
}

/**
 * One sm_80-family instance compiled and loaded on a device (an sm_80 device for `…_sm_80`
 * instances, an sm_90a one for `…_sm_90a`): `run` validates and launches, as `GemmKernel` does for
 * the sm_90a family.
 */
export class GemmSm80Kernel extends LoadedGemmKernel<GemmSm80Instance> {
  /**
   * Compiles `instance`, loads it on `device` (the runtime's `loadInstance`: `ArgumentError` naming
   * `device` when its arch is not the instance's target, `ParamLayoutMismatchError` if the driver
   * disagrees with the declared parameters) and opts the kernel in to its dynamic shared memory.
   */
  static async build(
    instance: GemmSm80Instance,
    options: { readonly device: Device; readonly compiler: Compiler },
  ): Promise<GemmSm80Kernel> {
    return new GemmSm80Kernel(instance, await LoadedGemmKernel.load(instance, options), options.device);
  }

  /** Validates (see `prepareGemmSm80Launch`) and enqueues one GEMM. */
  run(problem: GemmProblem, buffers: GemmBuffers): void {
    this.prepare(problem, buffers).launch();
  }

  /** Validates once; the returned `launch` only enqueues (for timing loops). */
  prepare(problem: GemmProblem, buffers: GemmBuffers): { readonly prepared: PreparedGemmSm80Launch; launch(): void } {
    const prepared = prepareGemmSm80Launch(this.instance, problem, buffers);
    return { prepared, launch: this.enqueuer(prepared.launch, prepared.args, buffers.stream) };
  }
}
