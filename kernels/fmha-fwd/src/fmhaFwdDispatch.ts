// Dispatch: picks the instance that runs a problem by the instances' explicit predicates, and says
// why nothing matched when nothing does.
import { NoInstanceError, selectInstance, type Rejection } from '@tilekit/codegen';
import { FMHA_FWD_CATALOG } from './fmhaFwdCatalog.ts';
import { FMHA_FWD_SCORE_MOD_CATALOG } from './fmhaFwdScoreModCatalog.ts';
import { FMHA_FWD_COMBINE_CATALOG, type FmhaFwdCombineInstance } from './fmhaFwdCombine.ts';
import { fmhaFwdCombineUnsupported } from './fmhaFwdCombineLauncher.ts';
import type { FmhaFwdInstance } from '@tilekit/fmha-launch';
import { fmhaFwdUnsupported } from '@tilekit/fmha-launch';
import { checkFmhaFwdProblem, formatFmhaFwdProblem, type CheckedFmhaFwdProblem, type FmhaFwdProblem } from '@tilekit/fmha';

/** No fmha-fwd instance can run the problem (code `fmha-fwd/no-instance`); `rejections` say why per instance. */
export class NoFmhaFwdInstanceError extends NoInstanceError {
  readonly problem: CheckedFmhaFwdProblem;

  constructor(problem: CheckedFmhaFwdProblem, rejections: readonly Rejection[], others: number) {
    super('fmha-fwd', formatFmhaFwdProblem(problem), rejections, others);
    this.problem = problem;
  }
}

/**
 * The instance that runs `problem`: among the instances whose predicates all hold (dtype, head
 * dims, mask kind, split or not, score modifier, TMA stride rules), the first of the catalog
 * (default: the dense catalog, or the score-modifier catalog for a problem with a modifier). Throws
 * `ArgumentError` for an invalid problem and `NoFmhaFwdInstanceError` when none fits.
 */
export function selectFmhaFwdInstance(
  problem: FmhaFwdProblem | CheckedFmhaFwdProblem,
  options: { readonly catalog?: readonly FmhaFwdInstance[] } = {},
): FmhaFwdInstance {
  const checked = 'rowsQ' in problem ? problem : checkFmhaFwdProblem(problem);
  const catalog = options.catalog ?? (checked.scoreModifier === undefined ? FMHA_FWD_CATALOG : FMHA_FWD_SCORE_MOD_CATALOG);
  const result = selectInstance(catalog, {
    unsupported: (instance) => fmhaFwdUnsupported(instance, checked),
    // Instances of another dtype or head dim are counted, not listed.
    relevant: (instance) =>
      instance.policy.dtype === checked.dtype && instance.policy.headDim === checked.hdimQ && instance.policy.headDimV === checked.hdimV,
    preference: () => [0],
  });
  if ('instance' in result) return result.instance;
  throw new NoFmhaFwdInstanceError(checked, result.rejections, result.others);
}

/**
 * The split-KV combine instance for `problem` (its dtype and hdimV; o row stride even). Throws
 * `ArgumentError` for an invalid problem and `NoFmhaFwdInstanceError` when none fits.
 */
export function selectFmhaFwdCombineInstance(
  problem: FmhaFwdProblem | CheckedFmhaFwdProblem,
  options: { readonly catalog?: readonly FmhaFwdCombineInstance[] } = {},
): FmhaFwdCombineInstance {
  const checked = 'rowsQ' in problem ? problem : checkFmhaFwdProblem(problem);
  const result = selectInstance(options.catalog ?? FMHA_FWD_COMBINE_CATALOG, {
    unsupported: (instance) => fmhaFwdCombineUnsupported(instance, checked),
    relevant: (instance) => instance.policy.dtype === checked.dtype,
    preference: () => [0],
  });
  if ('instance' in result) return result.instance;
  throw new NoFmhaFwdInstanceError(checked, result.rejections, result.others);
}
