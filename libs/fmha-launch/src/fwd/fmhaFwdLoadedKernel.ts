// What every forward kernel wrapper (the sm_90a attention kernel, the sm_80 one, the split-KV
// combine) does the same way on a device, on top of the runtime's loaded-kernel base: compile with
// the forward's flags, and turn a prepared launch into a closure that only enqueues.
import { FMHA_FWD_COMPILE_FLAGS } from '@tilekit/fmha';
import {
  LoadedKernel,
  type Compiler,
  type Device,
  type Dim3,
  type LoadableInstance,
  type LoadedInstance,
  type PackedKernelArgs,
  type Stream,
} from '@tilekit/runtime';

/** What the wrapper needs of an instance: compilable, and its dynamic shared memory. */
export type FmhaFwdLoadableInstance = LoadableInstance;

/** A launch validated and packed once: geometry and packed arguments (plus whatever the kernel adds). */
export interface FmhaFwdPackedLaunch {
  readonly launch: { readonly grid: Dim3; readonly block: Dim3; readonly sharedBytes: number };
  readonly args: PackedKernelArgs;
}

/**
 * One forward instance compiled and loaded on a device. Subclasses add `build` (through
 * `loadOn`) and `prepare` (through `enqueuer`). Postcondition (GPU specs, through the runners): a
 * prepared launch enqueues the instance with the geometry and arguments it was prepared with.
 */
export abstract class FmhaFwdLoadedKernel<I extends FmhaFwdLoadableInstance> extends LoadedKernel<I> {
  /** Compiles and loads `instance` (the runtime's `loadInstance` checks) and opts in to its dynamic shared memory. */
  protected static loadOn(
    instance: FmhaFwdLoadableInstance,
    options: { readonly device: Device; readonly compiler: Compiler },
  ): Promise<LoadedInstance> {
    return LoadedKernel.loadWith(instance, { ...options, flags: FMHA_FWD_COMPILE_FLAGS });
  }

  /** `prepared` with a `launch` that only enqueues it (on `stream`, else the default stream). */
  protected enqueuer<P extends FmhaFwdPackedLaunch>(prepared: P, stream: Stream | undefined): { readonly prepared: P; launch(): void } {
    return { prepared, launch: this.enqueue(prepared.launch, prepared.args, stream) };
  }
}
