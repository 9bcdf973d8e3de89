import type { BoundTensorAdaptor, TensorAdaptor } from './adaptor.ts';
import type { TensorDescriptor } from './descriptor.ts';
import { ArityMismatchError, CoordinateMismatchError } from './errors.ts';
import type { Bindings } from './symbolic/evaluate.ts';

/**
 * CK-tile's `tensor_adaptor_coordinate`: the **entire hidden index vector** of one top index, so
 * that moves only re-run the transforms they touch. Top and bottom indices are views of it.
 * Coordinates are mutable (moves update them in place, as in CK); `clone()` copies one.
 */
export class TensorAdaptorCoordinate {
  /** The bound adaptor this coordinate belongs to (its symbols' values). */
  readonly bound: BoundTensorAdaptor;
  /** hidden[id] for every hidden dim. */
  readonly hidden: number[];

  constructor(bound: BoundTensorAdaptor, hidden: number[]) {
    this.bound = bound;
    this.hidden = hidden;
  }

  /** The top index. */
  get topIndex(): number[] {
    return this.bound.adaptor.topDimHiddenIds.map((id) => this.hidden[id]!);
  }

  /** The bottom index. */
  get bottomIndex(): number[] {
    return this.bound.adaptor.bottomDimHiddenIds.map((id) => this.hidden[id]!);
  }

  /**
   * CK's `coordinate_has_valid_offset_assuming_top_index_is_valid`: every runtime-checked transform
   * (the pads) accepts its upper sub-index.
   */
  get isValidAssumingTopInRange(): boolean {
    return this.bound.isValidHidden(this.hidden);
  }

  /** Top index inside the top lengths and every padding predicate true. */
  get isValid(): boolean {
    return this.bound.isTopInRange(this.topIndex) && this.isValidAssumingTopInRange;
  }

  clone(): this {
    return new (this.constructor as new (b: BoundTensorAdaptor, h: number[]) => this)(this.bound, [...this.hidden]);
  }
}

/** CK-tile's `tensor_coordinate`: an adaptor coordinate of a descriptor; `offset` = hidden[0]. */
export class TensorCoordinate extends TensorAdaptorCoordinate {
  /** The element offset (meaningful when valid). */
  get offset(): number {
    return this.hidden[0]!;
  }

  /** The tensor index (= top index). */
  get index(): number[] {
    return this.topIndex;
  }
}

/** CK's `make_tensor_adaptor_coordinate`: evaluates every hidden dim of `top`. */
export function makeTensorAdaptorCoordinate(adaptor: TensorAdaptor, top: readonly number[], bindings?: Bindings): TensorAdaptorCoordinate {
  const bound = adaptor.bind(bindings);
  return new TensorAdaptorCoordinate(bound, bound.hiddenIndex(top));
}

/** CK's `make_tensor_coordinate`. Postcondition: coord.offset = desc.calculateOffset(index). */
export function makeTensorCoordinate(desc: TensorDescriptor, index: readonly number[], bindings?: Bindings): TensorCoordinate {
  const bound = desc.adaptor.bind(bindings);
  return new TensorCoordinate(bound, bound.hiddenIndex(index));
}

/**
 * CK's `move_tensor_adaptor_coordinate`: adds `step` to the top index and re-runs, last to first,
 * only the transforms a non-zero step reaches (see `transformsTouchedBy`): linear ones add the
 * propagated change, merge/xor/modulo recompute from their new upper index. Returns the bottom
 * change. Postcondition: the hidden vector equals a fresh evaluation of top + step.
 */
export function moveTensorAdaptorCoordinate(adaptor: TensorAdaptor, coord: TensorAdaptorCoordinate, step: readonly number[]): number[] {
  const dh = applyMove(adaptor, coord, step);
  return adaptor.bottomDimHiddenIds.map((id) => dh[id]!);
}

/** The move itself; returns the hidden diff vector (a scratch array of the bound adaptor). */
function applyMove(adaptor: TensorAdaptor, coord: TensorAdaptorCoordinate, step: readonly number[]): number[] {
  const bound = coord.bound;
  if (bound.adaptor !== adaptor) throw new CoordinateMismatchError('the coordinate was made for a different adaptor or descriptor');
  const tops = adaptor.topDimHiddenIds;
  if (step.length !== tops.length) throw new ArityMismatchError('coordinate step', tops.length, step.length);
  const h = coord.hidden;
  const dh = bound.diffScratch;
  dh.fill(0);
  let mask = 0;
  for (let i = 0; i < tops.length; i++) {
    const s = step[i]!;
    if (s === 0) continue;
    mask |= 1 << i;
    const id = tops[i]!;
    dh[id] = s;
    h[id] = h[id]! + s;
  }
  const run = tops.length <= 30 ? adaptor.transformsTouchedByMask(mask) : adaptor.transformsTouchedBy(step.map((s) => s !== 0));
  const steps = bound.steps;
  for (let k = 0; k < run.length; k++) steps[run[k]!]!.update(h, dh);
  return dh;
}

/**
 * CK's `move_tensor_coordinate`: moves `coord` (in place) by `step`; returns it.
 * Postcondition: coord.offset = desc.calculateOffset(old index + step).
 */
export function moveTensorCoordinate(desc: TensorDescriptor, coord: TensorCoordinate, step: readonly number[]): TensorCoordinate {
  applyMove(desc.adaptor, coord, step);
  return coord;
}

/** CK's `coordinate_has_valid_offset`: index inside the lengths and every pad predicate true. */
export function coordinateHasValidOffset(desc: TensorDescriptor, coord: TensorCoordinate): boolean {
  if (coord.bound.adaptor !== desc.adaptor) throw new CoordinateMismatchError('the coordinate was made for a different descriptor');
  return coord.isValid;
}

/** CK's `coordinate_has_valid_offset_assuming_top_index_is_valid`. */
export function coordinateHasValidOffsetAssumingTopIndexIsValid(desc: TensorDescriptor, coord: TensorCoordinate): boolean {
  if (coord.bound.adaptor !== desc.adaptor) throw new CoordinateMismatchError('the coordinate was made for a different descriptor');
  return coord.isValidAssumingTopInRange;
}
