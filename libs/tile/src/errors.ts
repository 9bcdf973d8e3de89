import { TilekitError } from '@tilekit/numeric';

/**
 * Every error the tile package raises on purpose. `code` is one of the stable `tile/*` strings
 * below; the message names the argument, the rule it broke and what was found.
 */
export class TileError extends TilekitError {}

/** A tile distribution encoding breaks a well-formedness rule (bad length, dangling or repeated reference…). */
export class EncodingError extends TileError {
  constructor(what: string, rule: string, found: string) {
    super('tile/invalid-encoding', `${what}: ${rule} (got ${found})`);
  }
}

/** An index, partition index or list has the wrong number of entries for the encoding. */
export class TileArityError extends TileError {
  constructor(what: string, expected: number, found: number) {
    super('tile/arity-mismatch', `${what}: expected ${expected} entries (got ${found})`);
  }
}

/** An index lies outside the lengths of the dims it indexes. */
export class TileIndexRangeError extends TileError {
  constructor(what: string, lengths: readonly number[], found: readonly number[]) {
    super(
      'tile/index-out-of-range',
      `${what}: each entry must lie in [0, length) for lengths [${lengths.join(', ')}] (got [${found.join(', ')}])`,
    );
  }
}

/** A builder (embed, reduce, slice, permute) got arguments it cannot honour. */
export class EncodingBuilderError extends TileError {
  constructor(builder: string, rule: string, found: string) {
    super('tile/invalid-builder-argument', `${builder}: ${rule} (got ${found})`);
  }
}

/** `sliceEncoding`: the requested box is not a sub-box of the Y digits (it would split a P digit or be ragged). */
export class SliceError extends TileError {
  constructor(rule: string, found: string) {
    super('tile/slice-not-representable', `sliceEncoding: ${rule} (got ${found})`);
  }
}

/** A fragment atom was asked for a shape, operand or dtype the instruction does not have. */
export class AtomError extends TileError {
  constructor(atom: string, rule: string, found: string) {
    super('tile/invalid-atom', `${atom}: ${rule} (got ${found})`);
  }
}

/** Tile code emission (windows, register tiles, tile operations) got arguments it cannot honour. */
export class TileEmitError extends TileError {
  constructor(what: string, rule: string, found: string) {
    super('tile/invalid-emit-argument', `${what}: ${rule} (got ${found})`);
  }
}

/** `shuffleTile`: the two distributions differ beyond the order of their Y dims (not an in-thread permutation). */
export class ShuffleTileError extends TileError {
  constructor(rule: string, found: string) {
    super('tile/shuffle-not-in-thread', `shuffleTile: ${rule} (got ${found})`);
  }
}
