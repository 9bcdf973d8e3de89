import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkDsaContextLens, checkDsaPrefillWindows } from './checkDsaHostInputs.ts';
import { DsaArgumentError } from './dsaArgumentError.ts';

function problemsOf(f: () => void): string[] {
  try {
    f();
    return [];
  } catch (e) {
    expect(e).toBeInstanceOf(DsaArgumentError);
    return (e as DsaArgumentError).problems.map((p) => p.argument);
  }
}

describe('checkDsaPrefillWindows / checkDsaContextLens', () => {
  it('accepts empty and full windows; names every broken entry', () => {
    expect(problemsOf(() => checkDsaPrefillWindows([0, 3, 5], [0, 5, 5], 3, 5))).toEqual([]);
    expect(problemsOf(() => checkDsaPrefillWindows([-1, 4, 0], [2, 3, 6], 3, 5))).toEqual([
      'windowStart[0]',
      'windowEnd[1]',
      'windowEnd[2]',
    ]);
    expect(problemsOf(() => checkDsaPrefillWindows([0], [1, 1], 2, 5))).toEqual(['windowStart']);
    expect(problemsOf(() => checkDsaContextLens([0, 7, 8, 9, 1.5], 5, 8))).toEqual(['contextLens[3]', 'contextLens[4]']);
    expect(problemsOf(() => checkDsaContextLens([1], 2, 8))).toEqual(['contextLens']);
  });

  it('fuzz: a window passes exactly when 0 ≤ start ≤ end ≤ seqKv, and errors are always typed', () => {
    fc.assert(
      fc.property(fc.integer({ min: -3, max: 40 }), fc.integer({ min: -3, max: 40 }), fc.integer({ min: 1, max: 32 }), (s, e, seqKv) => {
        const ok = s >= 0 && s <= e && e <= seqKv;
        expect(problemsOf(() => checkDsaPrefillWindows([s], [e], 1, seqKv)).length === 0).toBe(ok);
      }),
      { numRuns: 500 },
    );
  });
});
