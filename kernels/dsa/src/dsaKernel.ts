// One DSA kernel instance compiled and loaded: the runtime's LoadedKernel with the DSA compile flags
// and a launch of a packed, already validated argument block.
import type { PackedArguments } from '@tilekit/codegen';
import { ArgumentError } from '@tilekit/numeric';
import { LoadedKernel, type Compiler, type Device, type LoadableInstance, type Stream } from '@tilekit/runtime';

/** nvcc flags every DSA instance is compiled with (C++17, line info). */
export const DSA_COMPILE_FLAGS: readonly string[] = Object.freeze(['-std=c++17', '-lineinfo']);

/** A packed launch of one instance: what {@link DsaKernel.launch} enqueues. */
export interface DsaPackedLaunch<I> {
  readonly instance: I;
  readonly grid: readonly [number, number, number];
  readonly block: readonly [number, number, number];
  /** Dynamic shared memory (bytes; default 0). */
  readonly sharedBytes?: number;
  readonly args: PackedArguments;
}

/** An instance compiled with {@link DSA_COMPILE_FLAGS}, loaded, and opted in to its dynamic shared memory. */
export class DsaKernel<I extends LoadableInstance> extends LoadedKernel<I> {
  /** Compiles and loads `instance` on `options.device`. */
  static async build<I extends LoadableInstance>(
    instance: I,
    options: { readonly device: Device; readonly compiler: Compiler },
  ): Promise<DsaKernel<I>> {
    const loaded = await LoadedKernel.loadWith(instance, { ...options, flags: DSA_COMPILE_FLAGS });
    return new DsaKernel(instance, loaded, options.device);
  }

  /**
   * Enqueues a packed launch of this instance on `stream` (default: the legacy default stream).
   * @throws ArgumentError naming `launch` when it was packed for another instance.
   */
  launch(p: DsaPackedLaunch<I>, stream?: Stream): void {
    if (p.instance.name !== this.instance.name)
      throw new ArgumentError('launch', `was packed for ${p.instance.name}, this kernel is ${this.instance.name}`, p.instance.name);
    this.enqueue({ grid: p.grid, block: p.block, sharedBytes: p.sharedBytes ?? 0 }, p.args, stream)();
  }
}
