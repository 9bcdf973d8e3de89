// Fixtures of the forward launch specs (dense sm_90a and sm_80 launchers, the shared buffer
// checks): a checked problem with overridable fields and device ranges at fake aligned addresses.
import { ArgumentError } from '@tilekit/numeric';
import { checkFmhaFwdProblem, type CheckedFmhaFwdProblem, type FmhaFwdProblem } from '../fwd/fmhaFwdProblem.ts';

/** fp16, batch 2, 8 query heads over 2 key heads, d128, seqlens 300/1000 (batch mode unless `p` gives seqstarts), LSE; then `p`. */
export function fmhaFwdTestProblem(p: Partial<FmhaFwdProblem> = {}): CheckedFmhaFwdProblem {
  return checkFmhaFwdProblem({
    dtype: 'fp16',
    batch: 2,
    nheadQ: 8,
    nheadK: 2,
    hdimQ: 128,
    ...('seqstartQ' in p ? {} : { seqlenQ: 300, seqlenK: 1000 }),
    lse: true,
    ...p,
  });
}

/** Device range number `i`: 256 MiB at a distinct 256 MiB-aligned fake address (never dereferenced). */
export function fmhaFwdTestRange(i: number): { readonly ptr: bigint; readonly bytes: number } {
  return { ptr: BigInt(0x1000_0000 * (i + 1)), bytes: 2 ** 28 };
}

/** The arguments of every problem `run` is rejected for, in order (empty when it returns); rethrows anything but an ArgumentError. */
export function rejectedArguments(run: () => unknown): string[] {
  try {
    run();
  } catch (e) {
    if (!(e instanceof ArgumentError)) throw e;
    return e.problems.map((x) => x.argument);
  }
  return [];
}
