// The FFPA operator's problem: the dense forward's fields and rules, with FFPA's head dims and one
// pass (no split-KV, no score modifier).
import {
  checkFmhaFwdKernelRules,
  checkFmhaFwdProblem,
  FmhaFwdArgumentError,
  type CheckedFmhaFwdProblem,
  type FmhaFwdProblem,
} from '@tilekit/fmha';
import { ArgumentProblems } from '@tilekit/numeric';
import { FFPA_HEAD_DIMS } from './ffpaHeadDims.ts';

/** An FFPA problem: a forward attention problem (`FmhaFwdProblem`) with a large head dim, in one pass. */
export type FfpaProblem = Omit<FmhaFwdProblem, 'splitKv' | 'scoreModifier'> & {
  /** Only 1: FFPA has no split-KV (its tiles already fill the GPU at the head dims it serves). */
  readonly splitKv?: 1;
};

/**
 * Validates an FFPA problem and returns it with every default filled in. The rules of
 * `checkFmhaFwdProblem` (dtype, heads and GQA, sequences and varlen, layouts and strides, mask,
 * LSE, scale) with (hdimQ, hdimV) one of {@link FFPA_HEAD_DIMS}, `splitKv` absent or 1 and no
 * `scoreModifier`, then the kernels' rules (`checkFmhaFwdKernelRules`: a window mask or none,
 * 16-byte strides, an even O row stride). Throws one `FmhaFwdArgumentError` naming every broken `problem.<field>` and its
 * rule (the first one's field as `argument`).
 */
export function checkFfpaProblem(problem: FfpaProblem): CheckedFmhaFwdProblem {
  if (typeof problem !== 'object' || problem === null) throw new FmhaFwdArgumentError('problem', 'must be an object', problem);
  const v = new ArgumentProblems(FmhaFwdArgumentError);
  const { splitKv, scoreModifier, ...rest } = problem as FmhaFwdProblem;
  if (splitKv !== undefined && splitKv !== 1)
    v.report('problem.splitKv', 'must be 1 or absent: FFPA runs in one pass (no split-KV instance)', splitKv);
  if (scoreModifier !== undefined)
    v.report('problem.scoreModifier', 'must be absent: FFPA has no soft-capping or ALiBi instance', scoreModifier);
  const checked = v.check(() => checkFmhaFwdProblem(rest, { headDims: FFPA_HEAD_DIMS }));
  if (checked !== undefined) v.check(() => checkFmhaFwdKernelRules(checked));
  v.throwIfAny();
  return checked!;
}
