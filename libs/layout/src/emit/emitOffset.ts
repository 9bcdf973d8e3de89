import { bool, isExpr, type BlockBuilder, type Expr, type ExprLike } from '@tilekit/codegen';
import type { TensorAdaptor } from '../adaptor.ts';
import type { TensorDescriptor } from '../descriptor.ts';
import { ArityMismatchError } from '../errors.ts';
import { intervalOf } from '../symbolic/bounds.ts';
import type { SymInt } from '../symbolic/expr.ts';
import { composeTensorAdaptor } from './compose.ts';
import { IndexEmitter, type IndexEmitterOptions, type TempMemo } from './indexEmitter.ts';

/** Emitted bottom index and validity of one top index. */
export interface EmittedIndex {
  /** One expression per bottom dim. */
  readonly bottom: readonly Expr[];
  /** `bool`: every padding predicate holds (assuming the top index is inside the top lengths). */
  readonly valid: Expr;
}

/** Emitted offset and validity of one tensor index. */
export interface EmittedOffset {
  /** The element offset: a `const int` local, or `const long long` when its range needs 64 bits. */
  readonly offset: Expr;
  /** `bool` validity (see `EmittedIndex.valid`); a literal when it folds. */
  readonly valid: Expr;
}

/** The emitter to use: a given one, or a new one whose prologue is `b`. */
export function emitterFor(b: BlockBuilder, options: IndexEmitterOptions | IndexEmitter): IndexEmitter {
  return options instanceof IndexEmitter ? options : new IndexEmitter(b, options);
}

/** Registers the top index expressions (numbers fold) with their ranges [0, length) as index variables. */
export function topVariables(b: BlockBuilder, emitter: IndexEmitter, adaptor: TensorAdaptor, top: readonly ExprLike[]): SymInt[] {
  if (top.length !== adaptor.numTopDims) throw new ArityMismatchError('emitted top index', adaptor.numTopDims, top.length);
  return top.map((t, i) => {
    const len = adaptor.topLengths[i]!;
    if (!isExpr(t)) return Number(t);
    return emitter.indexVariable(b, t, { min: 0, max: intervalOf(len).hi - 1, extent: len }, `top${i}`);
  });
}

/**
 * Straight-line C++ for an adaptor's bottom index: `top` are the C++ expressions (or numbers) of the
 * top index, which must lie inside the top lengths. Everything static folds; temporaries for
 * division/modulo are declared in `b`. Postcondition (tested by compiling with g++): for every
 * in-range top index and admissible bindings, the emitted values equal `calculateBottomIndex` and
 * the validity equals the numeric evaluator's.
 */
export function emitCalculateBottomIndex(
  b: BlockBuilder,
  adaptor: TensorAdaptor,
  top: readonly ExprLike[],
  options: IndexEmitterOptions | IndexEmitter = {},
): EmittedIndex {
  const emitter = emitterFor(b, options);
  const memo: TempMemo = new Map();
  const composed = composeTensorAdaptor(adaptor, topVariables(b, emitter, adaptor, top));
  const bottom = adaptor.bottomDimHiddenIds.map((id) => emitter.emit(b, composed.hidden[id]!, memo));
  const valid = emitter.allNonNegative(b, composed.conditions, memo);
  return { bottom, valid };
}

/**
 * Straight-line C++ for a descriptor's element offset and validity (see
 * `emitCalculateBottomIndex`). The offset is declared as a `const` local named `offset` (made
 * unique), typed `int` unless its range needs `long long`; a non-trivial validity as `valid`.
 */
export function emitCalculateOffset(
  b: BlockBuilder,
  desc: TensorDescriptor,
  top: readonly ExprLike[],
  options: IndexEmitterOptions | IndexEmitter = {},
): EmittedOffset {
  const { bottom, valid } = emitCalculateBottomIndex(b, desc.adaptor, top, options);
  const off = bottom[0]!;
  const offset = off.kind === 'literal' ? off : b.let('offset', off.type, off);
  return { offset, valid: valid.kind === 'literal' ? valid : b.let('valid', bool, valid) };
}
