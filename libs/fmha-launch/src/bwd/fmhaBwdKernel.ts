// One backward kernel (any stage, any operator) compiled and loaded on a device, and a packed launch of it.
import type { PackedArguments } from '@tilekit/codegen';
import {
  loadInstance,
  type CompilableInstance,
  type CompileResult,
  type Compiler,
  type CudaModule,
  type Device,
  type Kernel,
  type KernelResources,
  type Stream,
} from '@tilekit/runtime';

/** Flags every backward kernel is compiled with (as the forward's). */
export const FMHA_BWD_COMPILE_FLAGS: readonly string[] = Object.freeze(['-std=c++17', '-lineinfo']);

/** One packed launch of a stage. */
export interface FmhaBwdPackedLaunch {
  readonly grid: readonly [number, number, number];
  readonly block: readonly [number, number, number];
  readonly sharedBytes: number;
  /** Thread-block cluster extent of a cluster kernel. */
  readonly cluster?: readonly [number, number, number];
  readonly args: PackedArguments;
}

/** A backward instance: what the runtime compiles, and its dynamic shared memory. */
export interface FmhaBwdKernelInstance extends CompilableInstance {
  readonly sharedBytes: number;
}

/** One backward instance compiled and loaded on a device. */
export class FmhaBwdKernel<I extends FmhaBwdKernelInstance = FmhaBwdKernelInstance> {
  readonly instance: I;
  readonly compiled: CompileResult;
  readonly module: CudaModule;
  readonly kernel: Kernel;

  private constructor(instance: I, compiled: CompileResult, module: CudaModule, kernel: Kernel) {
    this.instance = instance;
    this.compiled = compiled;
    this.module = module;
    this.kernel = kernel;
  }

  /** Compiles and loads (the runtime's arch and parameter-layout checks) and opts in to the dynamic shared memory. */
  static async build<I extends FmhaBwdKernelInstance>(
    instance: I,
    options: { readonly device: Device; readonly compiler: Compiler },
  ): Promise<FmhaBwdKernel<I>> {
    const loaded = await loadInstance(instance, { ...options, flags: FMHA_BWD_COMPILE_FLAGS });
    if (instance.sharedBytes > 0) loaded.kernel.setMaxDynamicSharedMemory(instance.sharedBytes);
    return new FmhaBwdKernel(instance, loaded.compiled, loaded.module, loaded.kernel);
  }

  get resources(): KernelResources {
    return this.compiled.resources;
  }

  /** Enqueues `p`; a grid without blocks (no key tiles, no query rows) has nothing to compute and is skipped. */
  launch(p: FmhaBwdPackedLaunch, stream: Stream | undefined): void {
    if (p.grid.some((n) => n === 0)) return;
    this.kernel.launch(
      {
        grid: p.grid,
        block: p.block,
        sharedBytes: p.sharedBytes,
        ...(p.cluster ? { cluster: p.cluster } : {}),
        ...(stream ? { stream } : {}),
      },
      p.args,
    );
  }

  dispose(): void {
    this.module.dispose();
  }
}
