// Dispatch: picks the instance that runs a problem by the instances' explicit predicates and
// preferences, and says why nothing matched when nothing does.
import { TilekitError } from '@tilekit/numeric';
import { PERMUTE_CATALOG } from './permuteCatalog.ts';
import { ALLOCATION_ALIGNMENT, type PermuteAlignment, type PermuteInstance } from './permuteInstance.ts';
import { checkPermuteProblem, formatPermuteProblem, type PermuteProblem } from './permuteProblem.ts';

/** Why one instance was rejected. */
export interface Rejection {
  readonly instance: string;
  readonly reasons: readonly string[];
}

/**
 * No instance can run the problem. `rejections` lists every instance of the problem's kind and
 * dtype with the predicates it failed; the message names them (others are counted).
 */
export class NoPermuteInstanceError extends TilekitError {
  readonly problem: PermuteProblem;
  readonly rejections: readonly Rejection[];

  constructor(problem: PermuteProblem, rejections: readonly Rejection[], others: number) {
    const lines = rejections.map((r) => `  ${r.instance}: ${r.reasons.join('; ')}`);
    super(
      'permute/no-instance',
      [
        `no permute instance runs ${formatPermuteProblem(problem)}:`,
        ...(lines.length > 0 ? lines : ['  (no instance of this kind and dtype)']),
        ...(others > 0 ? [`  (${others} instance(s) of other kinds or dtypes not listed)`] : []),
      ].join('\n'),
    );
    this.problem = problem;
    this.rejections = rejections;
  }
}

function compare(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
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
  const catalog = options.catalog ?? PERMUTE_CATALOG;
  const alignment = options.alignment ?? ALLOCATION_ALIGNMENT;
  const fits: PermuteInstance[] = [];
  const rejections: Rejection[] = [];
  let others = 0;
  for (const instance of catalog) {
    const reasons = instance.unsupported(checked, alignment);
    if (reasons.length === 0) fits.push(instance);
    else if (instance.kinds.includes(checked.kind) && instance.dtype === checked.dtype) rejections.push({ instance: instance.name, reasons });
    else others++;
  }
  if (fits.length === 0) throw new NoPermuteInstanceError(checked, rejections, others);
  return fits.reduce((best, i) => (compare(i.preference(checked), best.preference(checked)) < 0 ? i : best));
}
