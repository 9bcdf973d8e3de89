import fc from 'fast-check';
import type { ArgumentError } from '@tilekit/numeric';
import { describe, expect, it } from 'vitest';
import { checkFmhaBwdTraits, FmhaBwdTraitsError, type FmhaBwdTraits } from './fmhaBwdTraits.ts';

const base: FmhaBwdTraits = {
  batch: 2,
  nheadQ: 4,
  nheadK: 2,
  hdimQ: 64,
  hdimV: 64,
  dtype: 'fp16',
  groupMode: true,
  deterministic: true,
  seqlenQ: 10,
  seqlenK: 12,
  maxSeqlenQ: 6,
  maxSeqlenK: 8,
  seqstartQ: [0, 4, 10],
  seqstartK: [0, 8, 12],
};

/** The arguments of every problem `t` is rejected for (empty when accepted). */
function problemArguments(t: unknown): string[] {
  try {
    checkFmhaBwdTraits(t as FmhaBwdTraits);
  } catch (e) {
    expect(e).toBeInstanceOf(FmhaBwdTraitsError);
    const err = e as ArgumentError;
    expect(err.argument).toBe(err.problems[0]!.argument);
    return err.problems.map((x) => x.argument);
  }
  return [];
}

describe('checkFmhaBwdTraits', () => {
  it('reports every independent violation in one error: k violations give k problems (fast-check)', () => {
    // [argument, change, the arguments whose violation skips this check (it compares against them)]
    const violations: readonly (readonly [string, Partial<Record<keyof FmhaBwdTraits, unknown>>, readonly string[]])[] = [
      ['traits.dtype', { dtype: 'fp32' }, []],
      ['traits.batch', { batch: 0 }, []],
      ['traits.nheadQ', { nheadQ: -4 }, []],
      ['traits.nheadK', { nheadK: 2.5 }, []],
      ['traits.hdimQ', { hdimQ: 0 }, []],
      ['traits.hdimV', { hdimV: 1025 }, []],
      ['traits.deterministic', { deterministic: 1 }, []],
      ['traits.seqlenQ', { seqlenQ: 11 }, []],
      ['traits.maxSeqlenK', { maxSeqlenK: 9 }, ['traits.seqstartK[0]']],
      ['traits.seqstartK[0]', { seqstartK: [1, 8, 12], seqlenK: 12 }, []],
      ['traits.mask', { mask: 'q' }, []],
      ['traits.bias', { bias: 'none2' }, []],
      ['traits.storeRandval', { storeRandval: true }, []],
    ];
    fc.assert(
      fc.property(fc.subarray([...violations]), (chosen) => {
        const broken = new Set(chosen.map(([argument]) => argument));
        const expected = chosen.filter(([, , needs]) => needs.every((n) => !broken.has(n))).map(([argument]) => argument);
        expect(problemArguments(Object.assign({}, base, ...chosen.map(([, change]) => change)))).toEqual(expected);
      }),
    );
  });

  it('batch mode: stray seqstarts and unequal max lengths are reported together', () => {
    const { seqstartQ: _q, seqstartK: _k, ...batchBase } = base;
    expect(
      problemArguments({ ...batchBase, groupMode: false, seqstartK: [0, 1, 2], seqlenQ: 5, seqlenK: 5, maxSeqlenQ: 4, maxSeqlenK: 6 }),
    ).toEqual(['traits.seqstartK', 'traits.maxSeqlenQ', 'traits.maxSeqlenK']);
    expect(problemArguments({ ...base, groupMode: 'yes', hasDbias: true })).toEqual(['traits.groupMode', 'traits.hasDbias']);
  });
});
