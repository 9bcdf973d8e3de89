// Dispatch: picks the instance that runs a problem by the instances' explicit predicates and
// preferences, and says why nothing matched when nothing does.
import { NoInstanceError, selectInstance, type Rejection } from '@tilekit/codegen';
import { GEMM_CATALOG } from './gemmCatalog.ts';
import { GEMM_ALLOCATION_ALIGNMENT, type GemmAlignment, type GemmInstance } from './gemmInstance.ts';
import { checkGemmProblem, formatGemmProblem, type CheckedGemmProblem, type GemmProblem } from './gemmProblem.ts';

/** No gemm instance can run the problem (code `gemm/no-instance`); `rejections` say why per instance. */
export class NoGemmInstanceError extends NoInstanceError {
  readonly problem: CheckedGemmProblem;

  constructor(problem: CheckedGemmProblem, rejections: readonly Rejection[], others: number) {
    super('gemm', formatGemmProblem(problem), rejections, others);
    this.problem = problem;
  }
}

/**
 * The instance that runs `problem` with pointers of `alignment` (default: fresh allocations, 256
 * bytes): among the instances whose predicates all hold, the lowest `preference`, catalog order
 * breaking ties. Throws `ArgumentError` for an invalid problem and `NoGemmInstanceError` when none fits.
 */
export function selectGemmInstance(problem: GemmProblem, options: { readonly alignment?: GemmAlignment; readonly catalog?: readonly GemmInstance[] } = {}): GemmInstance {
  const checked = checkGemmProblem(problem);
  const alignment = options.alignment ?? GEMM_ALLOCATION_ALIGNMENT;
  const result = selectInstance(options.catalog ?? GEMM_CATALOG, {
    unsupported: (instance) => instance.unsupported(checked, alignment),
    // Instances of another dtype, layout or epilogue functor are counted, not listed.
    relevant: (instance) =>
      instance.dtype === checked.dtype && instance.policy.layout === checked.layout && instance.epilogue.bias === checked.bias && instance.epilogue.activation === checked.activation,
    preference: (instance) => instance.preference(checked),
  });
  if ('instance' in result) return result.instance;
  throw new NoGemmInstanceError(checked, result.rejections, result.others);
}
