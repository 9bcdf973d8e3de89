import { ArgumentError } from '@tilekit/numeric';

/**
 * Checks that `shape` is a list of non-negative safe integers (a rank-0 shape `[]` is a scalar)
 * and returns a frozen copy. Raises ArgumentError otherwise, as `<context>: shape must be …`.
 */
export function checkShape(shape: readonly number[], context = 'checkShape'): readonly number[] {
  if (!Array.isArray(shape) || shape.some((length) => !Number.isSafeInteger(length) || length < 0)) {
    throw new ArgumentError(context, 'shape must be an array of non-negative integers', shape);
  }
  if (!Number.isSafeInteger(shapeSize(shape))) throw new ArgumentError(context, 'shape must have at most 2^53 - 1 elements', shape);
  return Object.freeze([...shape]);
}

/** Number of elements of a shape: the product of its lengths (1 for the scalar shape `[]`). */
export function shapeSize(shape: readonly number[]): number {
  let size = 1;
  for (const length of shape) size *= length;
  return size;
}

/**
 * Packed row-major strides (in elements) of a shape: the last axis has stride 1 and each axis
 * steps over the whole of the axes after it, so `ravelIndex(index, shape)` = Σ index[i]·strides[i].
 */
export function rowMajorStrides(shape: readonly number[]): number[] {
  const strides = new Array<number>(shape.length);
  let step = 1;
  for (let axis = shape.length - 1; axis >= 0; axis--) {
    strides[axis] = step;
    step *= shape[axis] ?? 1;
  }
  return strides;
}

/**
 * The multi-index of the `flat`-th element in row-major (last axis fastest) order.
 * Postcondition (property-tested): `ravelIndex(unravelIndex(f, s), s) === f` for 0 ≤ f < size.
 */
export function unravelIndex(flat: number, shape: readonly number[]): number[] {
  const size = shapeSize(shape);
  if (!Number.isSafeInteger(flat) || flat < 0 || flat >= size) {
    throw new ArgumentError('unravelIndex', `flat index must be an integer in [0, ${size})`, flat);
  }
  const index = new Array<number>(shape.length);
  let rest = flat;
  for (let axis = shape.length - 1; axis >= 0; axis--) {
    const length = shape[axis] ?? 1;
    index[axis] = rest % length;
    rest = Math.floor(rest / length);
  }
  return index;
}

/** Row-major flat position of a multi-index (checked: rank and bounds), the inverse of unravelIndex. */
export function ravelIndex(index: readonly number[], shape: readonly number[]): number {
  checkIndex(index, shape, 'ravelIndex');
  let flat = 0;
  for (let axis = 0; axis < shape.length; axis++) flat = flat * (shape[axis] ?? 1) + (index[axis] ?? 0);
  return flat;
}

/**
 * Checks that `index` has one integer per axis, each in [0, shape[axis]); raises ArgumentError
 * (`<context>: index entry 1 must be an integer in [0, 3) for shape [2,3] (got [0,5])`) otherwise.
 */
export function checkIndex(index: readonly number[], shape: readonly number[], context = 'checkIndex'): void {
  if (!Array.isArray(index) || index.length !== shape.length) {
    throw new ArgumentError(context, `index must have ${shape.length} entries for shape ${formatShape(shape)}`, index);
  }
  for (let axis = 0; axis < shape.length; axis++) {
    const i = index[axis] ?? Number.NaN;
    const length = shape[axis] ?? 0;
    if (!Number.isInteger(i) || i < 0 || i >= length) {
      throw new ArgumentError(context, `index entry ${axis} must be an integer in [0, ${length}) for shape ${formatShape(shape)}`, index);
    }
  }
}

/**
 * Checks that `axes` is a permutation of 0..rank−1 (`<context>: axes must be a permutation of
 * 0..3 (got [0,0,1,2])` otherwise).
 */
export function checkPermutation(axes: readonly number[], rank: number, context = 'checkPermutation'): void {
  const seen = new Set<number>();
  const ok =
    Array.isArray(axes) &&
    axes.length === rank &&
    axes.every((a) => Number.isInteger(a) && a >= 0 && a < rank && !seen.has(a) && seen.add(a) !== undefined);
  if (!ok) {
    const rule = rank === 0 ? 'axes must be [] for a rank-0 tensor' : `axes must be a permutation of 0..${rank - 1}`;
    throw new ArgumentError(context, rule, axes);
  }
}

/** The inverse permutation: `inversePermutation(p)[p[i]] === i` (property-tested). */
export function inversePermutation(axes: readonly number[]): number[] {
  checkPermutation(axes, axes.length, 'inversePermutation');
  const inverse = new Array<number>(axes.length);
  axes.forEach((a, i) => (inverse[a] = i));
  return inverse;
}

/** `[2,3,4]`: the compact form used in every message of this package. */
export function formatShape(shape: readonly number[]): string {
  return `[${shape.join(',')}]`;
}
