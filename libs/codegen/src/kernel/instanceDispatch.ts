// Dispatch over an operator's instance catalog: the instance whose explicit predicates all hold,
// by preference, or an error that says, per instance, which predicate failed.
import { TilekitError } from '@tilekit/numeric';

/** Why one instance was rejected. */
export interface Rejection {
  readonly instance: string;
  readonly reasons: readonly string[];
}

/**
 * No instance of `operator` can run the problem. `rejections` lists the instances worth showing
 * (those of the problem's kind and dtype) with the predicates they failed; `others` counts the rest.
 * Code: `<operator>/no-instance`.
 */
export class NoInstanceError extends TilekitError {
  readonly operator: string;
  readonly rejections: readonly Rejection[];

  constructor(operator: string, problem: string, rejections: readonly Rejection[], others: number) {
    const lines = rejections.map((r) => `  ${r.instance}: ${r.reasons.join('; ')}`);
    super(
      `${operator}/no-instance`,
      [
        `no ${operator} instance runs ${problem}:`,
        ...(lines.length > 0 ? lines : ['  (no instance of this kind and dtype)']),
        ...(others > 0 ? [`  (${others} instance(s) of other kinds or dtypes not listed)`] : []),
      ].join('\n'),
    );
    this.operator = operator;
    this.rejections = rejections;
  }
}

/** How a catalog judges one problem. */
export interface InstanceRules<I> {
  /** The predicates `instance` fails for the problem (empty: it can run it). */
  unsupported(instance: I): readonly string[];
  /** Whether a rejected instance is worth listing (same kind and dtype as the problem). */
  relevant(instance: I): boolean;
  /** Lexicographic rank among fitting instances: lower wins; catalog order breaks ties. */
  preference(instance: I): readonly number[];
}

function compareRanks(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/**
 * The fitting instance with the lowest preference, or the rejections when none fits. Pure, so the
 * caller decides which error to raise (see `selectInstanceOrThrow`).
 */
export function selectInstance<I extends { readonly name: string }>(
  catalog: readonly I[],
  rules: InstanceRules<I>,
): { readonly instance: I } | { readonly rejections: readonly Rejection[]; readonly others: number } {
  let best: { instance: I; rank: readonly number[] } | undefined;
  const rejections: Rejection[] = [];
  let others = 0;
  for (const instance of catalog) {
    const reasons = rules.unsupported(instance);
    if (reasons.length === 0) {
      const rank = rules.preference(instance);
      if (best === undefined || compareRanks(rank, best.rank) < 0) best = { instance, rank };
    } else if (rules.relevant(instance)) {
      rejections.push({ instance: instance.name, reasons });
    } else {
      others++;
    }
  }
  return best !== undefined ? { instance: best.instance } : { rejections, others };
}
