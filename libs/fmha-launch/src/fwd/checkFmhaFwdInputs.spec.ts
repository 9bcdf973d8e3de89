import { fmhaFwdTestProblem as problem, fmhaFwdTestRange as big, rejectedArguments as problemArguments } from '@tilekit/fmha/testing';
import { describe, expect, it } from 'vitest';
import { checkFmhaFwdInputs } from './checkFmhaFwdInputs.ts';
import { checkFmhaFwdSequenceBuffers } from './checkFmhaFwdSequenceBuffers.ts';

describe('forward launch buffer checks', () => {
  const p = problem();

  it('the shared input and sequence-buffer checks name each broken buffer', () => {
    expect(
      problemArguments(() =>
        checkFmhaFwdInputs(p, { q: big(0), k: { ptr: 0x2000_0004n, bytes: 2 ** 28 }, v: { ptr: 0n, bytes: 0 } }, 'TMA'),
      ),
    ).toEqual(['k', 'v']);
    const g = problem({ batch: 2, seqstartQ: [0, 3, 7], seqstartK: [0, 5, 9], seqlenK: [4, 4] });
    expect(
      problemArguments(() => checkFmhaFwdSequenceBuffers(g, { seqstartQ: { ptr: 0x100n, bytes: 8 }, seqlenK: { ptr: 0x200n, bytes: 4 } })),
    ).toEqual(['seqstartQ', 'seqstartK', 'seqlenK']);
    expect(checkFmhaFwdSequenceBuffers(p, {})).toEqual({ seqstartQ: 0n, seqstartK: 0n, seqlenK: 0n });
  });
});
