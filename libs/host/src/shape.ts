import { ArgumentError } from '@tilekit/numeric';

/**
 * Checks that `shape` is a list of non-negative safe integers (a rank-0 shape `[]` is a scalar)
 * and returns a frozen copy. Raises ArgumentError naming `argument` otherwise.
 */
export function checkShape(shape: readonly number[], argument = 'shape'): readonly number[] {
  if (!Array.isArray(shape)) throw new ArgumentError(argument, 'must be an array of non-negative integers', shape);
  for (const length of shape) {
    if (!Number.isSafeInteger(length) || length < 0) {
      throw new ArgumentError(argument, 'must be an array of non-negative integers', shape);
    }
  }
  const size = shapeSize(shape);
  if (!Number.isSafeInteger(size)) throw new ArgumentError(argument, 'has more elements than 2^53 - 1', shape);
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
    throw new ArgumentError('flat index', `must be an integer in [0, ${size})`, flat);
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
  checkIndex(index, shape);
  let flat = 0;
  for (let axis = 0; axis < shape.length; axis++) flat = flat * (shape[axis] ?? 1) + (index[axis] ?? 0);
  return flat;
}

/**
 * Checks that `index` has one integer per axis, each in [0, shape[axis]); raises ArgumentError
 * naming `argument` with the offending axis otherwise.
 */
export function checkIndex(index: readonly number[], shape: readonly number[], argument = 'index'): void {
  if (!Array.isArray(index) || index.length !== shape.length) {
    throw new ArgumentError(argument, `must have ${shape.length} entries for shape ${formatShape(shape)}`, index);
  }
  for (let axis = 0; axis < shape.length; axis++) {
    const i = index[axis] ?? Number.NaN;
    const length = shape[axis] ?? 0;
    if (!Number.isInteger(i) || i < 0 || i >= length) {
      throw new ArgumentError(argument, `entry ${axis} must be an integer in [0, ${length}) for shape ${formatShape(shape)}`, index);
    }
  }
}

/** `[2,3,4]`: the compact form used in every message of this package. */
export function formatShape(shape: readonly number[]): string {
  return `[${shape.join(',')}]`;
}
