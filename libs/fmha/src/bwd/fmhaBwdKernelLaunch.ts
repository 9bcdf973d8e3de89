// The launch geometry of one backward kernel instance.
import type { FmhaFwdLaunch } from '../fwd/fmhaFwdLaunch.ts';

/** The launch of one backward instance: grid, threads (block), dynamic shared memory and (a cluster kernel) the cluster extent, as the forward's. */
export type FmhaBwdKernelLaunch = Pick<FmhaFwdLaunch, 'grid' | 'block' | 'sharedBytes' | 'cluster'>;

/** What an instance launches with: its threads per block and dynamic shared memory (its pipeline's). */
export interface FmhaBwdBlockShape {
  readonly threads: number;
  readonly sharedBytes: number;
}

/** The launch of `instance` over `grid`: blocks of its threads (x only), its dynamic shared memory, and clusters of `cluster` CTAs along x when above 1. */
export function makeFmhaBwdKernelLaunch(
  grid: readonly [number, number, number],
  instance: FmhaBwdBlockShape,
  cluster = 1,
): FmhaBwdKernelLaunch {
  return {
    grid,
    block: [instance.threads, 1, 1],
    sharedBytes: instance.sharedBytes,
    ...(cluster > 1 ? { cluster: [cluster, 1, 1] as const } : {}),
  };
}

/** A kernel instance's options (key, policy, target, params) with the threads and dynamic shared memory of its `pipeline`. */
export function fmhaBwdPipelineInstanceOptions<T extends object>(pipeline: FmhaBwdBlockShape, options: T): T & FmhaBwdBlockShape {
  return { ...options, threads: pipeline.threads, sharedBytes: pipeline.sharedBytes };
}
