import { fc, test } from '@fast-check/vitest';
import { ArgumentError } from '@tilekit/numeric';
import { describe, expect, it } from 'vitest';
import { checkKernelArgs, checkLaunch, dim3, type LaunchLimits } from './launch.ts';

const limits: LaunchLimits = {
  kernel: 'axpy',
  maxGridDim: [2_147_483_647, 65_535, 65_535],
  maxBlockDim: [1024, 1024, 64],
  maxThreadsPerBlock: 1024,
  maxDynamicSharedBytes: 49_152,
  clusterLaunch: true,
  maxClusterBlocks: 8,
};

function argumentOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    if (error instanceof ArgumentError) return error.argument;
    throw error;
  }
  return undefined;
}

describe('dim3', () => {
  it('pads to three axes', () => {
    expect(dim3('grid', 7)).toEqual([7, 1, 1]);
    expect(dim3('grid', [7, 2])).toEqual([7, 2, 1]);
    expect(dim3('grid', [7, 2, 3])).toEqual([7, 2, 3]);
  });

  it('names the axis that is not a positive integer', () => {
    expect(argumentOf(() => dim3('grid', 0))).toBe('grid.x');
    expect(argumentOf(() => dim3('grid', [1, -1]))).toBe('grid.y');
    expect(argumentOf(() => dim3('block', [1, 1, 1.5]))).toBe('block.z');
    expect(argumentOf(() => dim3('grid', [] as unknown as [number]))).toBe('grid');
    expect(argumentOf(() => dim3('grid', [1, 1, 1, 1] as unknown as [number]))).toBe('grid');
  });
});

describe('checkLaunch', () => {
  const validBlock = fc
    .tuple(fc.integer({ min: 1, max: 1024 }), fc.integer({ min: 1, max: 32 }), fc.integer({ min: 1, max: 4 }))
    .filter(([x, y, z]) => x * y * z <= 1024);

  test.prop([
    fc.tuple(fc.integer({ min: 1, max: 2 ** 31 - 1 }), fc.integer({ min: 1, max: 65_535 }), fc.integer({ min: 1, max: 65_535 })),
    validBlock,
    fc.integer({ min: 0, max: 49_152 }),
  ])('accepts every launch inside the limits, unchanged', (grid, block, sharedBytes) => {
    expect(checkLaunch({ grid, block, sharedBytes }, limits)).toEqual({ grid, block, sharedBytes, cluster: undefined });
  });

  test.prop([fc.integer({ min: 0, max: 2 }), fc.integer({ min: 1, max: 1000 })])(
    'rejects a grid extent above the device limit, naming the axis',
    (axis, excess) => {
      const grid: [number, number, number] = [1, 1, 1];
      grid[axis] = limits.maxGridDim[axis]! + excess;
      expect(argumentOf(() => checkLaunch({ grid, block: 32 }, limits))).toBe(`grid.${'xyz'[axis]}`);
    },
  );

  test.prop([fc.integer({ min: 1, max: 1024 }), fc.integer({ min: 1, max: 1024 }), fc.integer({ min: 1, max: 64 })])(
    'rejects every block of more than maxThreadsPerBlock threads, naming block',
    (x, y, z) => {
      fc.pre(x * y * z > 1024);
      expect(argumentOf(() => checkLaunch({ grid: 1, block: [x, y, z] }, limits))).toBe('block');
    },
  );

  it('rejects zero extents, a block over 1024 threads, and the kernel limit', () => {
    expect(argumentOf(() => checkLaunch({ grid: 0, block: 32 }, limits))).toBe('grid.x');
    expect(argumentOf(() => checkLaunch({ grid: 1, block: [32, 0] }, limits))).toBe('block.y');
    expect(argumentOf(() => checkLaunch({ grid: 1, block: 2048 }, limits))).toBe('block.x');
    expect(argumentOf(() => checkLaunch({ grid: 1, block: [64, 32] }, limits))).toBe('block');
    expect(argumentOf(() => checkLaunch({ grid: 1, block: 512 }, { ...limits, maxThreadsPerBlock: 256 }))).toBe('block');
    expect(() => checkLaunch({ grid: 1, block: [64, 32] }, limits)).toThrow(/at most 1024 threads for kernel axpy/);
  });

  it('checks dynamic shared memory against the kernel maximum', () => {
    expect(argumentOf(() => checkLaunch({ grid: 1, block: 1, sharedBytes: 49_153 }, limits))).toBe('sharedBytes');
    expect(argumentOf(() => checkLaunch({ grid: 1, block: 1, sharedBytes: -1 }, limits))).toBe('sharedBytes');
    expect(() => checkLaunch({ grid: 1, block: 1, sharedBytes: 65_536 }, limits)).toThrow(/setMaxDynamicSharedMemory/);
  });

  it('checks clusters: support, size, and that they tile the grid', () => {
    expect(checkLaunch({ grid: [8, 2], block: 32, cluster: [2, 2] }, limits).cluster).toEqual([2, 2, 1]);
    expect(argumentOf(() => checkLaunch({ grid: 8, block: 32, cluster: 2 }, { ...limits, clusterLaunch: false }))).toBe('cluster');
    expect(argumentOf(() => checkLaunch({ grid: 16, block: 32, cluster: 16 }, limits))).toBe('cluster');
    expect(argumentOf(() => checkLaunch({ grid: [6, 3], block: 32, cluster: [4, 1] }, limits))).toBe('grid.x');
  });
});

describe('checkKernelArgs', () => {
  const bytes = new Uint8Array(24);
  const params = [
    { offset: 0, size: 8 },
    { offset: 8, size: 8 },
    { offset: 16, size: 4 },
  ];

  it('accepts arguments that match the kernel parameter list', () => {
    expect(() => checkKernelArgs('k', { bytes, offsets: [0, 8, 16], sizes: [8, 8, 4] }, params)).not.toThrow();
    expect(() => checkKernelArgs('k', { bytes, offsets: [0, 8, 16], sizes: [8, 8, 4] }, undefined)).not.toThrow();
  });

  it('rejects a wrong count, a wrong size, and ranges outside the buffer', () => {
    expect(argumentOf(() => checkKernelArgs('k', { bytes, offsets: [0, 8], sizes: [8, 8] }, params))).toBe('args');
    expect(() => checkKernelArgs('k', { bytes, offsets: [0, 8], sizes: [8, 8] }, params)).toThrow(/takes 3 parameters/);
    expect(argumentOf(() => checkKernelArgs('k', { bytes, offsets: [0, 8, 16], sizes: [8, 4, 4] }, params))).toBe('args[1]');
    expect(argumentOf(() => checkKernelArgs('k', { bytes, offsets: [0, 8, 20], sizes: [8, 8, 8] }, undefined))).toBe('args[2]');
    expect(argumentOf(() => checkKernelArgs('k', { bytes, offsets: [0], sizes: [8, 8] }, undefined))).toBe('args');
  });
});
