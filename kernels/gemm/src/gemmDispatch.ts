// Dispatch: picks the instance that runs a problem by the instances' explicit predicates and
// preferences, and says why nothing matched when nothing does.
import { NoInstanceError, selectInstance, sm80, type Rejection } from '@tilekit/codegen';
import { GEMM_CATALOG } from './gemmCatalog.ts';
import { GEMM_ALLOCATION_ALIGNMENT, type GemmAlignment, type GemmInstance } from './gemmInstance.ts';
import type { AnyGemmInstance } from './anyGemmKernel.ts';
import { resolveGemmArch, type GemmArch } from './gemmArch.ts';
import { checkGemmProblem, formatGemmProblem, type CheckedGemmProblem, type GemmProblem } from './gemmProblem.ts';
import { gemmSm80CatalogFor } from './sm80/gemmSm80Catalog.ts';
import type { GemmSm80Instance } from './sm80/gemmSm80Instance.ts';

/** No gemm instance can run the problem (code `gemm/no-instance`); `rejections` say why per instance. */
export class NoGemmInstanceError extends NoInstanceError {
  readonly problem: CheckedGemmProblem;

  constructor(problem: CheckedGemmProblem, rejections: readonly Rejection[], others: number) {
    super('gemm', formatGemmProblem(problem), rejections, others);
    this.problem = problem;
  }
}

/** What dispatch needs of an instance of either family. */
interface DispatchedInstance {
  readonly name: string;
  readonly dtype: string;
  readonly policy: { readonly layout: string };
  readonly epilogue: { readonly bias: boolean; readonly activation: string };
  unsupported(problem: CheckedGemmProblem, alignment: GemmAlignment): string[];
  preference(problem: CheckedGemmProblem): readonly number[];
}

function select<I extends DispatchedInstance>(checked: CheckedGemmProblem, catalog: readonly I[], alignment: GemmAlignment): I {
  const result = selectInstance(catalog, {
    unsupported: (instance) => instance.unsupported(checked, alignment),
    // Instances of another dtype, layout or epilogue functor are counted, not listed.
    relevant: (instance) =>
      instance.dtype === checked.dtype &&
      instance.policy.layout === checked.layout &&
      instance.epilogue.bias === checked.bias &&
      instance.epilogue.activation === checked.activation,
    preference: (instance) => instance.preference(checked),
  });
  if ('instance' in result) return result.instance;
  throw new NoGemmInstanceError(checked, result.rejections, result.others);
}

/**
 * The sm_90a instance that runs `problem` with pointers of `alignment` (default: fresh allocations,
 * 256 bytes): among the instances whose predicates all hold, the lowest `preference`, catalog order
 * breaking ties. Throws `ArgumentError` for an invalid problem and `NoGemmInstanceError` when none fits.
 */
export function selectGemmInstance(
  problem: GemmProblem,
  options: { readonly alignment?: GemmAlignment; readonly catalog?: readonly GemmInstance[] } = {},
): GemmInstance {
  return select(checkGemmProblem(problem), options.catalog ?? GEMM_CATALOG, options.alignment ?? GEMM_ALLOCATION_ALIGNMENT);
}

/**
 * The sm_80-family instance that runs `problem` (as {@link selectGemmInstance}, over `catalog`,
 * default the sm_80 build `GEMM_SM80_CATALOG`; pass `gemmSm80CatalogFor(sm90a)` for Hopper).
 */
export function selectGemmSm80Instance(
  problem: GemmProblem,
  options: { readonly alignment?: GemmAlignment; readonly catalog?: readonly GemmSm80Instance[] } = {},
): GemmSm80Instance {
  return select(checkGemmProblem(problem), options.catalog ?? gemmSm80CatalogFor(sm80), options.alignment ?? GEMM_ALLOCATION_ALIGNMENT);
}

/**
 * Dispatch by target: the family `resolveGemmArch` picks for `options` (`arch` when given, else the
 * device's: sm_90a → the sm_90a catalog, sm_80 → the sm_80 catalog; no device → sm_90a), and in it
 * the instance that runs `problem` — sm_80 kernels in the build for the device (`…_sm_90a` on
 * Hopper). Throws `ArgumentError` (an invalid problem; `deviceArch` no family is built for; `arch`
 * sm90a on a device that is not sm_90a) and `NoGemmInstanceError` with every relevant instance's
 * reasons when none of the family fits.
 */
export function selectGemmInstanceFor(
  problem: GemmProblem,
  options: { readonly arch?: GemmArch; readonly deviceArch?: string; readonly alignment?: GemmAlignment } = {},
): AnyGemmInstance {
  const { arch, target } = resolveGemmArch(options);
  const checked = checkGemmProblem(problem);
  const alignment = options.alignment ?? GEMM_ALLOCATION_ALIGNMENT;
  return arch === 'sm90a' ? select(checked, GEMM_CATALOG, alignment) : select(checked, gemmSm80CatalogFor(target), alignment);
}
