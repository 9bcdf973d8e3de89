import { describe, expect, it } from 'vitest';
import { buildOncePerInstance } from './kernelInstance.ts';

describe('buildOncePerInstance', () => {
  it('builds each instance name once and shares the pending build between callers', async () => {
    const calls: string[] = [];
    const kernelFor = buildOncePerInstance(async (instance: { name: string }) => {
      calls.push(instance.name);
      return `kernel ${instance.name}`;
    });
    const [a1, a2, b] = await Promise.all([kernelFor({ name: 'a' }), kernelFor({ name: 'a' }), kernelFor({ name: 'b' })]);
    expect([a1, a2, b]).toEqual(['kernel a', 'kernel a', 'kernel b']);
    expect(calls).toEqual(['a', 'b']);
    expect(await Promise.all(kernelFor.builds())).toEqual(['kernel a', 'kernel b']);
  });
});
