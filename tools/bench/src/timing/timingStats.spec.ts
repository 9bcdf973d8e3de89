import { describe, expect, it } from 'vitest';
import { timingSpread, timingStats } from './timingStats.ts';

describe('timingStats', () => {
  it('is the median, min and max of the repetitions, keeping them and the launches per repetition', () => {
    expect(timingStats({ reps: [3, 1, 2], launchesPerRep: 5 })).toEqual({ ms: 2, msMin: 1, msMax: 3, reps: [3, 1, 2], launchesPerRep: 5 });
    expect(timingStats({ reps: [4, 1, 2, 3], launchesPerRep: 1 }).ms).toBe(2.5);
  });

  it('spread is (max − min) / median, 0 for a zero median', () => {
    expect(timingSpread({ ms: 2, msMin: 1.9, msMax: 2.1 })).toBeCloseTo(0.1, 12);
    expect(timingSpread({ ms: 0, msMin: 0, msMax: 0 })).toBe(0);
  });
});
