// What every forward kernel wrapper (the sm_90a attention kernel, the sm_80 one, the split-KV
// combine) does the same way on a device: compile with the forward's flags, load with the runtime's
// arch and parameter-layout checks, opt in to the instance's dynamic shared memory, and turn a
// prepared launch into a closure that only enqueues.
import { loadInstance, type CompilableInstance, type CompileResult, type Compiler, type CudaModule, type Device, type Dim3, type Kernel, type KernelResources, type LoadedInstance, type PackedKernelArgs, type Stream } from '@tilekit/runtime';

/** nvcc flags of every forward instance (the sm_90a and sm_80 kernels, the combine). */
export const FMHA_FWD_COMPILE_FLAGS: readonly string[] = Object.freeze(['-std=c++17', '-lineinfo']);

/** What the wrapper needs of an instance: compilable, and its dynamic shared memory. */
export interface FmhaFwdLoadableInstance extends CompilableInstance {
  readonly sharedBytes: number;
}

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
export abstract class FmhaFwdLoadedKernel<I extends FmhaFwdLoadableInstance> {
  readonly instance: I;
  readonly compiled: CompileResult;
  readonly module: CudaModule;
  readonly kernel: Kernel;
  readonly device: Device;

  protected constructor(instance: I, loaded: LoadedInstance, device: Device) {
    this.instance = instance;
    this.compiled = loaded.compiled;
    this.module = loaded.module;
    this.kernel = loaded.kernel;
    this.device = device;
  }

  /** Compiles and loads `instance` (the runtime's `loadInstance` checks) and opts in to its dynamic shared memory. */
  protected static async loadOn(instance: FmhaFwdLoadableInstance, options: { readonly device: Device; readonly compiler: Compiler }): Promise<LoadedInstance> {
    const loaded = await loadInstance(instance, { ...options, flags: FMHA_FWD_COMPILE_FLAGS });
    if (instance.sharedBytes > 0) loaded.kernel.setMaxDynamicSharedMemory(instance.sharedBytes);
    return loaded;
  }

  get resources(): KernelResources {
    return this.compiled.resources;
  }

  /** `prepared` with a `launch` that only enqueues it (on `stream`, else the default stream). */
  protected enqueuer<P extends FmhaFwdPackedLaunch>(prepared: P, stream: Stream | undefined): { readonly prepared: P; launch(): void } {
    const { launch, args } = prepared;
    const config = { grid: launch.grid, block: launch.block, sharedBytes: launch.sharedBytes, ...(stream ? { stream } : {}) };
    return { prepared, launch: () => this.kernel.launch(config, args) };
  }

  dispose(): void {
    this.module.dispose();
  }
}
