import { ArgumentError } from '@tilekit/numeric';
import type { PackedKernelArgs } from './kernelArgs.ts';
import type { Stream } from './stream.ts';

/** A grid, block or cluster extent: `n` means `[n, 1, 1]`; missing trailing entries are 1. */
export type Dim3 = number | readonly [number] | readonly [number, number] | readonly [number, number, number];

/** How to launch a kernel. */
export interface LaunchConfig {
  readonly grid: Dim3;
  readonly block: Dim3;
  /** Dynamic shared memory per block, bytes (default 0). */
  readonly sharedBytes?: number;
  /** Default: the legacy default stream. */
  readonly stream?: Stream;
  /** Thread-block cluster extent (Hopper and later); the grid must be a multiple of it. */
  readonly cluster?: Dim3;
}

/** The limits a launch is checked against: the device's, narrowed by the kernel's attributes. */
export interface LaunchLimits {
  readonly kernel: string;
  readonly maxGridDim: readonly [number, number, number];
  readonly maxBlockDim: readonly [number, number, number];
  /** min(device limit, kernel limit from registers and __launch_bounds__). */
  readonly maxThreadsPerBlock: number;
  /** The kernel's current CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES. */
  readonly maxDynamicSharedBytes: number;
  readonly clusterLaunch: boolean;
  /** The most blocks per cluster (8 is portable). */
  readonly maxClusterBlocks: number;
}

/** A launch after validation: explicit x, y, z everywhere. */
export interface CheckedLaunch {
  readonly grid: readonly [number, number, number];
  readonly block: readonly [number, number, number];
  readonly sharedBytes: number;
  readonly cluster: readonly [number, number, number] | undefined;
}

const AXES = ['x', 'y', 'z'] as const;

/** Expands a Dim3 to [x, y, z], checking each entry is an integer >= 1. */
export function dim3(argument: string, value: Dim3): [number, number, number] {
  const list = typeof value === 'number' ? [value] : Array.isArray(value) ? [...(value as readonly number[])] : undefined;
  if (list === undefined || list.length < 1 || list.length > 3) {
    throw new ArgumentError(argument, 'must be a number or an array of 1 to 3 numbers', value);
  }
  while (list.length < 3) list.push(1);
  list.forEach((n, i) => {
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 1) {
      throw new ArgumentError(`${argument}.${AXES[i]}`, 'must be an integer >= 1', n);
    }
  });
  return list as [number, number, number];
}

/**
 * Validates a launch against `limits` and returns it in explicit form. Throws `ArgumentError`
 * naming the argument for: a grid or block extent < 1 or above the device limit, a block of
 * more threads than the kernel allows (1024 at most), dynamic shared memory above the kernel's
 * current maximum, or a cluster that is unsupported, too large, or does not divide the grid.
 */
export function checkLaunch(config: LaunchConfig, limits: LaunchLimits): CheckedLaunch {
  const grid = dim3('grid', config.grid);
  const block = dim3('block', config.block);
  grid.forEach((n, i) => {
    if (n > limits.maxGridDim[i]!) {
      throw new ArgumentError(`grid.${AXES[i]}`, `must be at most ${limits.maxGridDim[i]} (device limit)`, n);
    }
  });
  block.forEach((n, i) => {
    if (n > limits.maxBlockDim[i]!) {
      throw new ArgumentError(`block.${AXES[i]}`, `must be at most ${limits.maxBlockDim[i]} (device limit)`, n);
    }
  });
  const threads = block[0] * block[1] * block[2];
  if (threads > limits.maxThreadsPerBlock) {
    throw new ArgumentError(
      'block',
      `must have at most ${limits.maxThreadsPerBlock} threads for kernel ${limits.kernel} (registers and launch bounds)`,
      threads,
    );
  }
  const sharedBytes = config.sharedBytes ?? 0;
  if (!Number.isInteger(sharedBytes) || sharedBytes < 0) {
    throw new ArgumentError('sharedBytes', 'must be a non-negative integer', sharedBytes);
  }
  if (sharedBytes > limits.maxDynamicSharedBytes) {
    throw new ArgumentError(
      'sharedBytes',
      `must be at most ${limits.maxDynamicSharedBytes} for kernel ${limits.kernel}; call setMaxDynamicSharedMemory to opt in to more`,
      sharedBytes,
    );
  }
  let cluster: [number, number, number] | undefined;
  if (config.cluster !== undefined) {
    if (!limits.clusterLaunch) throw new ArgumentError('cluster', 'requires a device that supports cluster launch (sm_90+)');
    cluster = dim3('cluster', config.cluster);
    const blocks = cluster[0] * cluster[1] * cluster[2];
    if (blocks > limits.maxClusterBlocks) {
      throw new ArgumentError('cluster', `must have at most ${limits.maxClusterBlocks} blocks`, blocks);
    }
    cluster.forEach((n, i) => {
      if (grid[i]! % n !== 0) {
        throw new ArgumentError(`grid.${AXES[i]}`, `must be a multiple of cluster.${AXES[i]} = ${n}`, grid[i]);
      }
    });
  }
  return { grid, block, sharedBytes, cluster };
}

/** A kernel parameter as the driver reports it (`cuFuncGetParamInfo`). */
export interface KernelParamInfo {
  readonly offset: number;
  readonly size: number;
}

/**
 * Validates packed arguments: offsets and sizes pair up and stay inside `bytes`, and, when the
 * kernel's parameter list is known, there is one argument per parameter of exactly its size.
 * Throws `ArgumentError` naming `args` (or `args[i]`).
 */
export function checkKernelArgs(kernel: string, args: PackedKernelArgs, params: readonly KernelParamInfo[] | undefined): void {
  if (!(args.bytes instanceof Uint8Array)) throw new ArgumentError('args.bytes', 'must be a Uint8Array', typeof args.bytes);
  if (args.offsets.length !== args.sizes.length) {
    throw new ArgumentError('args', 'offsets and sizes must have the same length', {
      offsets: args.offsets.length,
      sizes: args.sizes.length,
    });
  }
  args.offsets.forEach((offset, i) => {
    const size = args.sizes[i]!;
    if (!Number.isInteger(offset) || offset < 0 || !Number.isInteger(size) || size < 1 || offset + size > args.bytes.length) {
      throw new ArgumentError(`args[${i}]`, `must lie inside the ${args.bytes.length}-byte buffer`, { offset, size });
    }
  });
  if (params === undefined) return;
  if (params.length !== args.offsets.length) {
    throw new ArgumentError('args', `kernel ${kernel} takes ${params.length} parameters`, args.offsets.length);
  }
  params.forEach((param, i) => {
    if (param.size !== args.sizes[i]) {
      throw new ArgumentError(`args[${i}]`, `kernel ${kernel} parameter ${i} is ${param.size} bytes`, args.sizes[i]);
    }
  });
}
