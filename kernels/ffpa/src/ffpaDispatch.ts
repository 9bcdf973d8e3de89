// Dispatch: the FFPA instance that computes one column slice of a problem, chosen by the instances'
// explicit predicates, with the reasons when none fits.
import { NoInstanceError, selectInstance, type Rejection } from '@tilekit/codegen';
import { formatFmhaFwdProblem, type CheckedFmhaFwdProblem } from '@tilekit/fmha';
import { FFPA_CATALOG } from './ffpaCatalog.ts';
import { ffpaInstanceUnsupported, type FfpaInstance } from './ffpaKernel.ts';

/** No FFPA instance computes a slice of the problem (code `ffpa/no-instance`); `rejections` say why per instance. */
export class NoFfpaInstanceError extends NoInstanceError {
  readonly problem: CheckedFmhaFwdProblem;

  constructor(problem: CheckedFmhaFwdProblem, rejections: readonly Rejection[], others: number) {
    super('ffpa', formatFmhaFwdProblem(problem), rejections, others);
    this.problem = problem;
  }
}

/**
 * The first instance of `catalog` (default {@link FFPA_CATALOG}) whose predicates all hold for
 * `slice`, a launch problem whose hdimV is one column slice's width (`ffpaSliceProblem`). Throws
 * `NoFfpaInstanceError` when none does. The catalog may hold instances of either path.
 */
export function selectFfpaInstance(slice: CheckedFmhaFwdProblem, catalog: readonly FfpaInstance[] = FFPA_CATALOG): FfpaInstance {
  const result = selectInstance(catalog, {
    unsupported: (instance) => ffpaInstanceUnsupported(instance, slice),
    relevant: (instance) =>
      instance.policy.dtype === slice.dtype && instance.policy.headDim === slice.hdimQ && instance.policy.headDimV === slice.hdimV,
    preference: () => [0],
  });
  if ('instance' in result) return result.instance;
  throw new NoFfpaInstanceError(slice, result.rejections, result.others);
}
