// Dispatch: picks the instance that runs a problem by the instances' explicit predicates and
// preferences, and says why nothing matched when nothing does.
import { NoInstanceError, selectInstance, type Rejection } from '@tilekit/codegen';
import { PERMUTE_CATALOG } from './permuteCatalog.ts';
import { ALLOCATION_ALIGNMENT, type PermuteAlignment, type PermuteInstance } from './permuteInstance.ts';
import { checkPermuteProblem, formatPermuteProblem, type PermuteProblem } from './permuteProblem.ts';

/** No permute instance can run the problem (code `permute/no-instance`); `rejections` say why per instance. */
export class NoPermuteInstanceError extends NoInstanceError {
  readonly problem: PermuteProblem;

  constructor(problem: PermuteProblem, rejections: readonly Rejection[], others: number) {
    super('permute', formatPermuteProblem(problem), rejections, others);
    this.problem = problem;
  }
}

/**
 * The instance that runs `problem` with pointers of `alignment` (default: fresh allocations, 256
 * bytes): among the instances whose predicates all hold, the one with the lowest `preference`
 * (widest vectors first, then the instance's own tie-breaks), catalog order breaking ties.
 * Throws `ArgumentError` for an invalid problem and `NoPermuteInstanceError` when none fits.
 */
export function selectPermuteInstance(
  problem: PermuteProblem,
  options: { readonly alignment?: PermuteAlignment; readonly catalog?: readonly PermuteInstance[] } = {},
): PermuteInstance {
  const checked = checkPermuteProblem(problem);
  const alignment = options.alignment ?? ALLOCATION_ALIGNMENT;
  const result = selectInstance(options.catalog ?? PERMUTE_CATALOG, {
    unsupported: (instance) => instance.unsupported(checked, alignment),
    relevant: (instance) => instance.kinds.includes(checked.kind) && instance.dtype === checked.dtype,
    preference: (instance) => instance.preference(checked),
  });
  if ('instance' in result) return result.instance;
  throw new NoPermuteInstanceError(checked, result.rejections, result.others);
}
