import { checkFmhaFwdProblem, type FmhaFwdProblem } from '@tilekit/fmha';
import { ArgumentError } from '@tilekit/numeric';
import { describe, expect, it } from 'vitest';
import { checkFmhaFwdInputs } from './checkFmhaFwdInputs.ts';
import { checkFmhaFwdSequenceBuffers } from './checkFmhaFwdSequenceBuffers.ts';

const problem = (p: Partial<FmhaFwdProblem> = {}) =>
  checkFmhaFwdProblem({
    dtype: 'fp16',
    batch: 2,
    nheadQ: 8,
    nheadK: 2,
    hdimQ: 128,
    ...('seqstartQ' in p ? {} : { seqlenQ: 300, seqlenK: 1000 }),
    lse: true,
    ...p,
  });
const big = (i: number) => ({ ptr: BigInt(0x1000_0000 * (i + 1)), bytes: 2 ** 28 });

/** The arguments of every problem `run` is rejected for (empty when accepted). */
function problemArguments(run: () => unknown): string[] {
  try {
    run();
  } catch (e) {
    expect(e).toBeInstanceOf(ArgumentError);
    return (e as ArgumentError).problems.map((x) => x.argument);
  }
  return [];
}

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
