import { describe, expect, it } from 'vitest';
import { withHeldBuffers, withHeldBuffersAsync } from './withHeldBuffers.ts';

/** A device and buffers that log what happens to them. */
function fakes(): { log: string[]; device: { synchronize(): void }; buffer(name: string): { name: string; dispose(): void } } {
  const log: string[] = [];
  return {
    log,
    device: { synchronize: () => log.push('synchronize') },
    buffer: (name) => ({ name, dispose: () => log.push(`dispose ${name}`) }),
  };
}

describe('withHeldBuffers', () => {
  it("returns the body's result, then synchronizes and frees every held buffer in the order held", () => {
    const f = fakes();
    const result = withHeldBuffers(f.device, (hold) => {
      const a = hold(f.buffer('a'));
      hold(f.buffer('b'));
      f.log.push('body');
      return a.name;
    });
    expect(result).toBe('a');
    expect(f.log).toEqual(['body', 'synchronize', 'dispose a', 'dispose b']);
  });

  it('frees what was held when the body throws, and rethrows', () => {
    const f = fakes();
    expect(() =>
      withHeldBuffers(f.device, (hold) => {
        hold(f.buffer('q'));
        throw new Error('upload of k failed');
      }),
    ).toThrow('upload of k failed');
    expect(f.log).toEqual(['synchronize', 'dispose q']);
  });
});

describe('withHeldBuffersAsync', () => {
  it('frees the held buffers only once the async body has settled', async () => {
    const f = fakes();
    const result = await withHeldBuffersAsync(f.device, async (hold) => {
      hold(f.buffer('a'));
      await Promise.resolve();
      f.log.push('after await');
      return 7;
    });
    expect(result).toBe(7);
    expect(f.log).toEqual(['after await', 'synchronize', 'dispose a']);
  });

  it('frees what was held when the body rejects, and rejects', async () => {
    const f = fakes();
    await expect(
      withHeldBuffersAsync(f.device, async (hold) => {
        hold(f.buffer('q'));
        await Promise.resolve();
        throw new Error('build failed');
      }),
    ).rejects.toThrow('build failed');
    expect(f.log).toEqual(['synchronize', 'dispose q']);
  });
});
