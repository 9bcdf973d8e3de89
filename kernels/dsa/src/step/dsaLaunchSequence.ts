// A list of packed DSA launches (a decode or prefill step) with their kernels compiled and loaded, enqueued in order.
import { CudaGraph, type Compiler, type Device, type LoadableInstance, type Stream } from '@tilekit/runtime';
import { DsaKernel, type DsaPackedLaunch } from '../dsaKernel.ts';

/** Packed launches with their kernels: {@link DsaLaunchSequence.launch} enqueues them all, in order, on one stream. */
export class DsaLaunchSequence {
  readonly launches: readonly DsaPackedLaunch<LoadableInstance>[];
  readonly #kernels: readonly DsaKernel<LoadableInstance>[];

  private constructor(launches: readonly DsaPackedLaunch<LoadableInstance>[], kernels: readonly DsaKernel<LoadableInstance>[]) {
    this.launches = launches;
    this.#kernels = kernels;
  }

  /** Compiles (through `compiler`'s cache) and loads every launch's instance on `device`, in order. */
  static async build(
    launches: readonly DsaPackedLaunch<LoadableInstance>[],
    options: { readonly device: Device; readonly compiler: Compiler },
  ): Promise<DsaLaunchSequence> {
    const kernels = [];
    for (const l of launches) kernels.push(await DsaKernel.build(l.instance, options));
    return new DsaLaunchSequence(launches, kernels);
  }

  /** Enqueues every launch in order on `stream` (default: the legacy default stream). */
  launch(stream?: Stream): void {
    this.launches.forEach((l, i) => this.#kernels[i]!.launch(l, stream));
  }

  /**
   * The whole list captured as one CUDA graph on `stream` (a created stream; the legacy stream cannot be captured):
   * `graph.launch()` then replays every kernel with one call, the fewest host launches a step can take.
   */
  capture(stream: Stream): CudaGraph {
    return CudaGraph.capture(stream, () => this.launch(stream));
  }

  /** Unloads the kernels' modules. */
  dispose(): void {
    for (const k of this.#kernels) k.dispose();
  }
}
