// The FFPA backward's problem: the dense backward's fields and rules (@tilekit/fmha's
// checkFmhaBwdProblem), with FFPA's head dims and no score modifier, and the
// layout its kernels read (16-byte cp.async rows, element-pair stores).
import { checkFmhaBwdProblem, FmhaBwdArgumentError, type CheckedFmhaBwdProblem, type FmhaBwdProblem } from '@tilekit/fmha';
import { fmhaBwdStrideProblems } from '@tilekit/fmha-launch';
import { ArgumentProblems } from '@tilekit/numeric';
import { FFPA_HEAD_DIMS } from '../ffpaHeadDims.ts';

/**
 * An FFPA backward problem: a backward attention problem with a large head dim and no score
 * modifier; `deterministic` (sm_90a path only) adds dQ in key order, bitwise reproducible.
 */
export type FfpaBwdProblem = Omit<FmhaBwdProblem, 'scoreModifier'>;

/** Q, K, V and dO rows are read as 16-byte cp.async vectors: every stride a multiple of 8 elements. */
const loads = (s: number): string | undefined =>
  s % 8 !== 0 ? "must be a multiple of 8 elements (FFPA backward's 16-byte loads)" : undefined;

function reportLayout(v: ArgumentProblems, p: CheckedFmhaBwdProblem): void {
  for (const x of fmhaBwdStrideProblems(p, loads))
    v.report(`problem.strides.${x.tensor}.${x.stride}`, x.rule === 'exceeds int32' ? 'must fit an int32' : x.rule, x.value);
}

/**
 * Validates an FFPA backward problem: the rules of `checkFmhaBwdProblem`, (hdimQ, hdimV) one of
 * {@link FFPA_HEAD_DIMS}, no `scoreModifier`, a window mask or none,
 * and strides its kernels can read (`fmhaBwdStrideProblems`). Throws one `FmhaBwdArgumentError` naming
 * every broken `problem.<field>` and its rule.
 */
export function checkFfpaBwdProblem(problem: FfpaBwdProblem | CheckedFmhaBwdProblem): CheckedFmhaBwdProblem {
  if (typeof problem !== 'object' || problem === null) throw new FmhaBwdArgumentError('problem', 'must be an object', problem);
  const v = new ArgumentProblems(FmhaBwdArgumentError);
  const given = problem as FmhaBwdProblem;
  if (given.scoreModifier !== undefined)
    v.report('problem.scoreModifier', 'must be absent: FFPA has no soft-capping or ALiBi instance', given.scoreModifier);
  const p = 'rowsQ' in problem ? problem : v.check(() => checkFmhaBwdProblem(problem));
  if (p !== undefined) {
    if (!FFPA_HEAD_DIMS.some((h) => h.hdimQ === p.hdimQ && h.hdimV === p.hdimV))
      v.report('problem.hdimQ', `(hdimQ, hdimV) must be one of ${FFPA_HEAD_DIMS.map((h) => `${h.hdimQ}/${h.hdimV}`).join(', ')}`, [
        p.hdimQ,
        p.hdimV,
      ]);
    if (p.mask.kind === 'generic') v.report('problem.mask', 'must be a window mask or none (no generic (y, x) mask instance)', p.mask);
    reportLayout(v, p);
  }
  v.throwIfAny();
  return p!;
}
