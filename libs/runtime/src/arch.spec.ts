import { fc, test } from '@fast-check/vitest';
import { ArgumentError } from '@tilekit/numeric';
import { describe, expect, it } from 'vitest';
import { archForComputeCapability, archRunsOn, parseArch } from './arch.ts';

describe('archForComputeCapability', () => {
  it('uses the arch-specific a suffix from Hopper on', () => {
    expect(archForComputeCapability({ major: 9, minor: 0 })).toBe('sm_90a');
    expect(archForComputeCapability({ major: 10, minor: 0 })).toBe('sm_100a');
    expect(archForComputeCapability({ major: 12, minor: 0 })).toBe('sm_120a');
    expect(archForComputeCapability({ major: 8, minor: 6 })).toBe('sm_86');
    expect(archForComputeCapability({ major: 8, minor: 0 })).toBe('sm_80');
  });

  test.prop([fc.integer({ min: 1, max: 12 }), fc.integer({ min: 0, max: 9 })])(
    'parseArch inverts it, and the arch runs on its own capability',
    (major, minor) => {
      const arch = archForComputeCapability({ major, minor });
      const parsed = parseArch(arch);
      expect([parsed.major, parsed.minor]).toEqual([major, minor]);
      expect(parsed.suffix).toBe(major >= 9 ? 'a' : '');
      expect(archRunsOn(arch, { major, minor })).toBe(true);
    },
  );

  it('rejects impossible capabilities', () => {
    expect(() => archForComputeCapability({ major: 9, minor: 10 })).toThrow(ArgumentError);
    expect(() => archForComputeCapability({ major: 0.5, minor: 0 })).toThrow(ArgumentError);
  });
});

describe('parseArch', () => {
  it('rejects names nvcc would not accept as a real arch', () => {
    for (const bad of ['compute_90', 'sm90', 'sm_', 'sm_9', 'sm_90b', 'SM_90']) {
      expect(() => parseArch(bad), bad).toThrow(/arch: must look like sm_80/);
    }
  });

  it('knows an sm_90a cubin runs only on 9.0 while sm_80 runs on later 8.x', () => {
    expect(archRunsOn('sm_90a', { major: 9, minor: 0 })).toBe(true);
    expect(archRunsOn('sm_90a', { major: 10, minor: 0 })).toBe(false);
    expect(archRunsOn('sm_80', { major: 8, minor: 6 })).toBe(true);
    expect(archRunsOn('sm_86', { major: 8, minor: 0 })).toBe(false);
  });
});
