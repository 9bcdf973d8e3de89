import type { BoundTensorAdaptor } from './adaptor.ts';
import { ArityMismatchError, InvalidTensorIndexError } from './errors.ts';
import { evaluateSymInt } from './symbolic/evaluate.ts';
import type { SymInt } from './symbolic/expr.ts';

/**
 * Throws unless `index` has a valid offset under `bound`, with CK-tile's meaning of valid
 * (`coordinate_has_valid_offset`): every entry is an integer inside its top length, and every
 * runtime-checked transform (the pads without `skipValidityCheck`) accepts the hidden index it
 * sees. Merges, unmerges, embeds, slices and the other always-valid transforms map in-range upper
 * indices to valid lower ones by promise, so they add no condition (as in CK); a naive
 * descriptor's offsets stay inside its element space for in-range indices.
 *
 * Errors (`InvalidTensorIndexError`, both with `index ∉ [0, length)`): `layout/index-out-of-bounds`
 * names the first top dim out of range, its entry and its length; `layout/index-in-padding` names
 * the pad that rejects the index (nearest the top first), the top dim it reads (or its hidden dim),
 * and the unpadded index and length. Postcondition: returns iff `bound.isTopInRange(index) &&
 * bound.isValidTop(index)` for integer entries.
 */
export function checkTensorIndex(bound: BoundTensorAdaptor, index: readonly number[]): void {
  const lengths = bound.topLengths;
  if (index.length !== lengths.length) throw new ArityMismatchError('tensor index', lengths.length, index.length);
  for (let d = 0; d < lengths.length; d++) {
    const x = index[d]!;
    const length = lengths[d]!;
    if (!Number.isInteger(x) || x < 0 || x >= length) {
      throw new InvalidTensorIndexError(
        'layout/index-out-of-bounds',
        `tensor index[${d}]: must be an integer in [0, ${length}) (got ${x} in [${index.join(', ')}])`,
        { dim: d, index: x, length },
      );
    }
  }
  const h = bound.hiddenIndex(index);
  const a = bound.adaptor;
  for (let i = a.transforms.length - 1; i >= 0; i--) {
    if (!a.transforms[i]!.isAlwaysValid && !bound.steps[i]!.valid(h)) throw paddingError(bound, i, h, index);
  }
}

/** The error for transform `i` rejecting hidden vector `h` of `index`. */
function paddingError(bound: BoundTensorAdaptor, i: number, h: readonly number[], index: readonly number[]): InvalidTensorIndexError {
  const a = bound.adaptor;
  const t = a.transforms[i]!;
  const up = a.upperDimHiddenIds[i]![0]!;
  const dim = a.topDimHiddenIds.indexOf(up);
  const where = dim >= 0 ? `index[${dim}] = ${h[up]}` : `hidden dim ${up} = ${h[up]} (from index [${index.join(', ')}])`;
  const low = a.lowerDimHiddenIds[i]!;
  const j = Math.max(
    0,
    low.findIndex((id, k) => outside(h[id]!, lowerLength(bound, t.lowerLengths[k]))),
  );
  const lower = h[low[j]!] ?? Number.NaN;
  const length = lowerLength(bound, t.lowerLengths[j]);
  const message = `tensor index [${index.join(', ')}]: ${where} lies in the padding of ${t.toString()} (its unpadded index ${lower} is outside [0, ${length}))`;
  return new InvalidTensorIndexError('layout/index-in-padding', message, { dim, index: lower, length });
}

function lowerLength(bound: BoundTensorAdaptor, length: SymInt | undefined): number {
  return length === undefined ? Number.NaN : evaluateSymInt(length, bound.bindings);
}

function outside(x: number, length: number): boolean {
  return !(x >= 0 && x < length);
}
