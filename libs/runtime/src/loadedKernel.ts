// What every operator's device-side kernel wrapper does the same way, whatever the operator:
// compile and load an instance with the runtime's arch and parameter-layout checks, opt in to its
// dynamic shared memory, report ptxas resources, turn a prepared launch into a closure that only
// enqueues, and unload.
import type { CompileResult, Compiler } from './compiler.ts';
import type { CudaModule } from './cudaModule.ts';
import type { Device } from './device.ts';
import type { Kernel } from './kernel.ts';
import type { PackedKernelArgs } from './kernelArgs.ts';
import { loadInstance, type CompilableInstance, type LoadedInstance } from './kernelInstance.ts';
import type { Dim3 } from './launch.ts';
import type { KernelResources } from './ptxasInfo.ts';
import type { Stream } from './stream.ts';

/** What loading needs of an instance: compilable, and the dynamic shared memory (bytes per block) it launches with. */
export interface LoadableInstance extends CompilableInstance {
  readonly sharedBytes: number;
}

/** The geometry of one launch: grid, block, dynamic shared memory (bytes) and, for a cluster launch, the cluster. */
export interface KernelLaunchGeometry {
  readonly grid: Dim3;
  readonly block: Dim3;
  readonly sharedBytes: number;
  readonly cluster?: Dim3;
}

/**
 * One instance compiled and loaded on a device. Operators subclass it with a static `build`
 * (through {@link LoadedKernel.loadWith}, their compile flags) and a validated `prepare` / `run`
 * (through {@link LoadedKernel.enqueue}).
 */
export abstract class LoadedKernel<I extends LoadableInstance> {
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

  /**
   * Compiles `instance` with `options.flags` and loads it on `options.device` (see
   * {@link loadInstance}: `ArgumentError` on an arch mismatch before compiling,
   * `ParamLayoutMismatchError` when the driver disagrees with the declared layout), then opts the
   * kernel in to the instance's dynamic shared memory when it uses any.
   */
  protected static async loadWith(
    instance: LoadableInstance,
    options: { readonly device: Device; readonly compiler: Compiler; readonly flags: readonly string[] },
  ): Promise<LoadedInstance> {
    const loaded = await loadInstance(instance, options);
    if (instance.sharedBytes > 0) loaded.kernel.setMaxDynamicSharedMemory(instance.sharedBytes);
    return loaded;
  }

  /** Registers, spills and shared memory as ptxas reported them. */
  get resources(): KernelResources {
    return this.compiled.resources;
  }

  /** A closure that only enqueues `args` with `launch`'s geometry (on `stream`, else the default stream). */
  protected enqueue(launch: KernelLaunchGeometry, args: PackedKernelArgs, stream: Stream | undefined): () => void {
    const config = {
      grid: launch.grid,
      block: launch.block,
      sharedBytes: launch.sharedBytes,
      ...(launch.cluster ? { cluster: launch.cluster } : {}),
      ...(stream ? { stream } : {}),
    };
    return () => this.kernel.launch(config, args);
  }

  /** Unloads the module (queued launches must have finished). */
  dispose(): void {
    this.module.dispose();
  }
}
