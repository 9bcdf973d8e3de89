import type { TensorAdaptor } from '../adaptor.ts';
import { ArityMismatchError } from '../errors.ts';
import type { SymInt } from '../symbolic/expr.ts';

/** The hidden index of an adaptor as SymInts of a symbolic top index, and its validity conditions. */
export interface ComposedIndex {
  /** hidden[id] for every hidden id (undefined for ids no transform touches). */
  readonly hidden: readonly (SymInt | undefined)[];
  /** Conditions (each required ≥ 0) whose conjunction is the validity of an in-range top index. */
  readonly conditions: readonly SymInt[];
}

/**
 * Runs the adaptor symbolically (CK's `calculate_bottom_index` over SymInts): top dims take `top`,
 * then every transform, last to first, writes its lower dims from its upper dims. Simplification
 * happens as the expressions are built (e.g. merge ∘ unmerge cancels to the identity).
 * Postcondition: evaluating `hidden[id]` under bindings of the symbols and of `top` equals the
 * numeric evaluator's hidden[id] for every top index inside the top lengths.
 */
export function composeTensorAdaptor(adaptor: TensorAdaptor, top: readonly SymInt[]): ComposedIndex {
  if (top.length !== adaptor.numTopDims) throw new ArityMismatchError('top index', adaptor.numTopDims, top.length);
  const hidden = new Array<SymInt | undefined>(adaptor.numHiddenDims).fill(undefined);
  adaptor.topDimHiddenIds.forEach((id, i) => {
    hidden[id] = top[i]!;
  });
  const conditions: SymInt[] = [];
  for (let i = adaptor.transforms.length - 1; i >= 0; i--) {
    const t = adaptor.transforms[i]!;
    const up = adaptor.upperDimHiddenIds[i]!.map((id) => hidden[id]!);
    if (!t.isAlwaysValid) conditions.push(...t.validitySymbolic(up));
    const low = t.lowerSymbolic(up);
    adaptor.lowerDimHiddenIds[i]!.forEach((id, j) => {
      hidden[id] = low[j]!;
    });
  }
  return { hidden, conditions };
}
