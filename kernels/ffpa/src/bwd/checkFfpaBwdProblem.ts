// The FFPA backward's problem: the dense backward's fields and rules (@tilekit/fmha's
// checkFmhaBwdProblem), with FFPA's head dims, atomic dQ only and no score modifier, and the
// layout its kernels read (16-byte cp.async rows, element-pair stores).
import {
  checkFmhaBwdProblem,
  FmhaBwdArgumentError,
  type CheckedFmhaBwdProblem,
  type FmhaBwdProblem,
  type FmhaBwdTensor,
} from '@tilekit/fmha';
import { FMHA_BWD_DQ_STORE_VECTOR } from '@tilekit/fmha-launch';
import { ArgumentProblems } from '@tilekit/numeric';
import { FFPA_HEAD_DIMS } from '../ffpaHeadDims.ts';

/** An FFPA backward problem: a backward attention problem with a large head dim, dQ by atomics, no score modifier. */
export type FfpaBwdProblem = Omit<FmhaBwdProblem, 'scoreModifier' | 'deterministic'> & {
  /** Only false: FFPA's backward adds dQ with atomics (no deterministic instance yet). */
  readonly deterministic?: false;
};

/** The element multiple each tensor's strides must keep: 8 (16-byte cp.async rows and dot_do_o's vectors), dQ 4, dK/dV 2. */
const STRIDE_MULTIPLE: Readonly<Record<FmhaBwdTensor, number>> = {
  q: 8,
  k: 8,
  v: 8,
  dO: 8,
  o: 8,
  dQ: FMHA_BWD_DQ_STORE_VECTOR,
  dK: 2,
  dV: 2,
};

function reportLayout(v: ArgumentProblems, p: CheckedFmhaBwdProblem): void {
  for (const [name, multiple] of Object.entries(STRIDE_MULTIPLE) as [FmhaBwdTensor, number][])
    for (const what of ['row', 'head', 'batch'] as const) {
      const s = p.strides[name][what];
      if (what === 'batch' && p.mode === 'group') continue;
      if (s % multiple !== 0)
        v.report(`problem.strides.${name}.${what}`, `must be a multiple of ${multiple} elements (FFPA backward's loads and stores)`, s);
      if (what === 'row' && s > 2 ** 31 - 8) v.report(`problem.strides.${name}.row`, 'must fit an int32', s);
    }
}

/**
 * Validates an FFPA backward problem: the rules of `checkFmhaBwdProblem`, (hdimQ, hdimV) one of
 * {@link FFPA_HEAD_DIMS}, `deterministic` absent or false, no `scoreModifier`, a window mask or none,
 * and strides its kernels can read (`STRIDE_MULTIPLE`). Throws one `FmhaBwdArgumentError` naming
 * every broken `problem.<field>` and its rule.
 */
export function checkFfpaBwdProblem(problem: FfpaBwdProblem | CheckedFmhaBwdProblem): CheckedFmhaBwdProblem {
  if (typeof problem !== 'object' || problem === null) throw new FmhaBwdArgumentError('problem', 'must be an object', problem);
  const v = new ArgumentProblems(FmhaBwdArgumentError);
  const given = problem as FmhaBwdProblem;
  if (given.deterministic === true)
    v.report('problem.deterministic', 'must be false or absent: FFPA backward adds dQ with atomics (no deterministic instance)', true);
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
