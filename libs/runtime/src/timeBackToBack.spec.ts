import { describe, expect, it } from 'vitest';
import type { Device } from './device.ts';
import { timeBackToBack, type TimeBackToBackOptions } from './timeBackToBack.ts';

// The option rules (typed errors before any device call); the timing itself runs in the GPU bench.
describe('timeBackToBack options', () => {
  const ok: TimeBackToBackOptions = { warmup: 1, repetitions: 3, targetMs: 20, minLaunches: 1, maxLaunches: 100 };
  const noDevice = {} as Device;
  const rejects = (change: Partial<TimeBackToBackOptions>, argument: string) =>
    expect(() => timeBackToBack(noDevice, () => {}, { ...ok, ...change })).toThrow(expect.objectContaining({ argument }));

  it('names the argument and the rule of each bad option', () => {
    rejects({ warmup: -1 }, 'warmup');
    rejects({ repetitions: 0 }, 'repetitions');
    rejects({ repetitions: 1.5 }, 'repetitions');
    rejects({ minLaunches: 0 }, 'maxLaunches');
    rejects({ minLaunches: 10, maxLaunches: 5 }, 'maxLaunches');
    rejects({ targetMs: 0 }, 'targetMs');
    rejects({ targetMs: Number.NaN }, 'targetMs');
    rejects({ warmupMs: -1 }, 'warmupMs');
    rejects({ warmupMs: Number.POSITIVE_INFINITY }, 'warmupMs');
  });
});
