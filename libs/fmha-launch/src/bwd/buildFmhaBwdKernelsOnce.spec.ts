import type { Compiler, Device } from '@tilekit/runtime';
import { describe, expect, it } from 'vitest';
import { buildFmhaBwdKernelsOnce } from './buildFmhaBwdKernelsOnce.ts';
import type { FmhaBwdKernelInstance } from './fmhaBwdKernel.ts';

describe('buildFmhaBwdKernelsOnce', () => {
  it('opens the device lazily, at the first build, and builds each instance name once', async () => {
    let opened = 0;
    const device = (): Device => {
      opened++;
      throw new Error('no device here');
    };
    const memo = buildFmhaBwdKernelsOnce({ device, compiler: {} as Compiler });
    expect(opened).toBe(0);
    const instance = { name: 'fmha_bwd_test' } as FmhaBwdKernelInstance;
    const first = memo(instance);
    await expect(first).rejects.toThrow('no device here');
    expect(memo(instance)).toBe(first);
    expect(memo({ name: 'fmha_bwd_other' } as FmhaBwdKernelInstance)).not.toBe(first);
    await Promise.allSettled(memo.builds());
    expect([opened, memo.builds().length]).toEqual([2, 2]);
  });
});
