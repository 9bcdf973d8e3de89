import { TilekitError } from '@tilekit/numeric';

/**
 * Every error the layout algebra raises on purpose. `code` is one of the stable `layout/*` strings
 * below; the message names the argument, the rule it broke and what was found.
 */
export class LayoutError extends TilekitError {}

/** A transform, adaptor or index got a list of the wrong length (e.g. 3 indices for a 2-d descriptor). */
export class ArityMismatchError extends LayoutError {
  constructor(what: string, expected: number, found: number) {
    super('layout/arity-mismatch', `${what}: expected ${expected} entries (got ${found})`);
  }
}

/** A length is negative, zero, not an integer, or (symbolic) not provably ≥ 1. */
export class InvalidLengthError extends LayoutError {
  constructor(what: string, found: string) {
    super('layout/invalid-length', `${what}: a length must be an integer ≥ 1 (got ${found})`);
  }
}

/** A transform parameter other than a length broke its rule (negative pad, slice outside its length…). */
export class InvalidParameterError extends LayoutError {
  constructor(what: string, rule: string, found: string) {
    super('layout/invalid-parameter', `${what}: ${rule} (got ${found})`);
  }
}

/** `xor` is a bijection only when the swizzled length is a static power of two. */
export class XorLengthError extends LayoutError {
  constructor(found: string) {
    super('layout/xor-not-power-of-two', `xor lengths[1]: must be a static power of two (got ${found})`);
  }
}

/** In `transformTensor*`, one old top dimension appears in the lower ids of two transforms. */
export class DimensionConsumedTwiceError extends LayoutError {
  constructor(what: string, dim: number) {
    super('layout/dim-consumed-twice', `${what}: top dimension ${dim} is consumed by more than one transform`);
  }
}

/** In `transformTensor*`, an old top dimension is consumed by no transform. */
export class DimensionNotConsumedError extends LayoutError {
  constructor(what: string, dim: number) {
    super('layout/dim-not-consumed', `${what}: top dimension ${dim} is consumed by no transform`);
  }
}

/** The hidden-id graph of an adaptor is malformed (a dim written twice, read before written, …). */
export class HiddenGraphError extends LayoutError {
  constructor(rule: string) {
    super('layout/invalid-hidden-graph', `tensor adaptor hidden-dimension graph: ${rule}`);
  }
}

/** New top-dimension positions do not form a permutation of 0..n−1. */
export class TopDimensionPermutationError extends LayoutError {
  constructor(what: string, found: readonly number[]) {
    super(
      'layout/top-dims-not-permutation',
      `${what}: new top dimension ids must be a permutation of 0..${found.length - 1} (got [${found.join(', ')}])`,
    );
  }
}

/** A symbol needed for evaluation has no binding, or its binding breaks the symbol's declared domain. */
export class BindingError extends LayoutError {
  constructor(code: 'layout/unbound-symbol' | 'layout/binding-out-of-domain', message: string) {
    super(code, message);
  }
}

/** Symbolic arithmetic left the exactly representable range (|x| ≤ 2^53 − 1) or divided by a value not provably ≥ 1. */
export class SymbolicArithmeticError extends LayoutError {
  constructor(code: 'layout/integer-overflow' | 'layout/non-positive-divisor', message: string) {
    super(code, message);
  }
}

/** A coordinate was used with a descriptor (or bindings) other than the one it was made for. */
export class CoordinateMismatchError extends LayoutError {
  constructor(rule: string) {
    super('layout/coordinate-mismatch', `tensor coordinate: ${rule}`);
  }
}

/** A transform's lower length disagrees with the static length of the dimension it consumes. */
export class LengthMismatchError extends LayoutError {
  constructor(what: string, expected: string, found: string) {
    super(
      'layout/length-mismatch',
      `${what}: the transform expects a dimension of length ${found} but the dimension has length ${expected}`,
    );
  }
}

/**
 * A tensor index with no valid offset, found by a checked evaluation (`calculateOffsetChecked`):
 * `layout/index-out-of-bounds` when `index[dim]` is not an integer in [0, length) (`dim`, `index`,
 * `length` say which), `layout/index-in-padding` when every entry is inside the lengths but a
 * padding transform rejects it (the entry lies in the padding; `dim` is the top dim it came from,
 * −1 when it is a hidden dim below the top).
 */
export class InvalidTensorIndexError extends LayoutError {
  readonly dim: number;
  readonly index: number;
  readonly length: number;

  constructor(
    code: 'layout/index-out-of-bounds' | 'layout/index-in-padding',
    message: string,
    where: { readonly dim: number; readonly index: number; readonly length: number },
  ) {
    super(code, message);
    this.dim = where.dim;
    this.index = where.index;
    this.length = where.length;
  }
}
