import { bool, sub as cSub, type BlockBuilder, type Expr, type ExprLike, type IntType, type VarExpr } from '@tilekit/codegen';
import type { TensorAdaptor } from '../adaptor.ts';
import type { TensorDescriptor } from '../descriptor.ts';
import { ArityMismatchError, InvalidParameterError } from '../errors.ts';
import { intervalOf, type Interval } from '../symbolic/bounds.ts';
import { forEachAtom, type SymInt } from '../symbolic/expr.ts';
import { sub } from '../symbolic/poly.ts';
import { composeTensorAdaptor } from './compose.ts';
import { emitterFor, topVariables } from './emitOffset.ts';
import { castTo, indexTypeFor, type IndexEmitter, type IndexEmitterOptions, type TempMemo } from './indexEmitter.ts';

/** One stored hidden dim of an emitted coordinate. */
interface StoredDim {
  readonly variable: VarExpr;
  readonly type: IntType;
  /** Its stand-in in symbolic expressions (honest range; top dims also carry their extent). */
  readonly atom: SymInt;
  readonly range: Interval;
}

/**
 * A tensor (adaptor) coordinate living in emitted C++: mutable variables holding the hidden dims
 * that moves and validity need (CK keeps the whole hidden vector; dims only linear transforms read
 * are folded away: their changes flow as deltas). Made by `emitMakeTensorCoordinate`, moved by
 * `emitMoveTensorCoordinate`, which must be emitted in the coordinate's block or a block nested in it.
 */
export class EmittedCoordinate {
  readonly adaptor: TensorAdaptor;
  readonly emitter: IndexEmitter;
  /** Stored hidden dims by hidden id. */
  readonly stored: ReadonlyMap<number, StoredDim>;

  constructor(adaptor: TensorAdaptor, emitter: IndexEmitter, stored: ReadonlyMap<number, StoredDim>) {
    this.adaptor = adaptor;
    this.emitter = emitter;
    this.stored = stored;
  }

  /** The bottom index variables (for a descriptor: `[offset]`). */
  get bottom(): readonly VarExpr[] {
    return this.adaptor.bottomDimHiddenIds.map((id) => this.stored.get(id)!.variable);
  }

  /** The element offset variable (descriptors: hidden dim 0). */
  get offset(): VarExpr {
    return this.bottom[0]!;
  }
}

/**
 * The hidden dims a coordinate must store: the bottom, both sides of every non-linear transform
 * (merge/xor/modulo recompute from their upper dims and report lower changes), and the upper dims of
 * runtime-checked pads (validity reads them).
 */
export function storedHiddenDims(adaptor: TensorAdaptor): number[] {
  const s = new Set<number>(adaptor.bottomDimHiddenIds);
  adaptor.transforms.forEach((t, i) => {
    if (!t.isLinear) {
      adaptor.upperDimHiddenIds[i]!.forEach((id) => s.add(id));
      adaptor.lowerDimHiddenIds[i]!.forEach((id) => s.add(id));
    }
    if (!t.isAlwaysValid) adaptor.upperDimHiddenIds[i]!.forEach((id) => s.add(id));
  });
  return [...s].sort((a, b) => a - b);
}

function adaptorOf(x: TensorDescriptor | TensorAdaptor): TensorAdaptor {
  return 'adaptor' in x ? x.adaptor : x;
}

/**
 * CK's `make_tensor_coordinate` in emitted C++: declares the stored hidden dims as mutable locals of
 * `b`, initialized from the top index (numbers fold). Types are `int` unless a dim's range needs
 * `long long`. Postcondition: the offset variable equals `calculateOffset(top)`.
 */
export function emitMakeTensorCoordinate(
  b: BlockBuilder,
  desc: TensorDescriptor | TensorAdaptor,
  top: readonly ExprLike[],
  options: IndexEmitterOptions | IndexEmitter = {},
): EmittedCoordinate {
  const adaptor = adaptorOf(desc);
  const emitter = emitterFor(b, options);
  const memo: TempMemo = new Map();
  const composed = composeTensorAdaptor(adaptor, topVariables(b, emitter, adaptor, top));
  const tops = new Map(adaptor.topDimHiddenIds.map((id, i) => [id, i]));
  const stored = new Map<number, StoredDim>();
  for (const id of storedHiddenDims(adaptor)) {
    const value = composed.hidden[id]!;
    const topPos = tops.get(id);
    const len = topPos === undefined ? undefined : adaptor.topLengths[topPos]!;
    const range = len === undefined ? intervalOf(value) : { lo: 0, hi: intervalOf(len).hi - 1 };
    const type = indexTypeFor(range, `hidden dim ${id}`);
    const variable = b.var(
      id === 0 && adaptor.bottomDimHiddenIds.includes(0) ? 'offset' : `h${id}`,
      type,
      castTo(emitter.emit(b, value, memo), type),
    );
    const atom = emitter.bindVariable(
      variable,
      len === undefined ? { min: range.lo, max: range.hi } : { min: range.lo, max: range.hi, extent: len },
    );
    stored.set(id, { variable, type, atom, range });
  }
  return new EmittedCoordinate(adaptor, emitter, stored);
}

type Action =
  | { readonly kind: 'add'; readonly dim: StoredDim; readonly delta: SymInt }
  | {
      readonly kind: 'recompute';
      readonly dim: StoredDim;
      readonly value: SymInt;
      readonly delta: { readonly name: string; readonly range: Interval };
    };

/**
 * CK's `move_tensor_coordinate` by a static `step`, in emitted C++: only the transforms a non-zero
 * step reaches run; linear ones add their (folded) change to the stored dims, merge/xor/modulo
 * recompute their lower dims from the updated upper dims. Postcondition: afterwards the coordinate
 * equals one made at top + step (tested against the TS evaluator with g++).
 */
export function emitMoveTensorCoordinate(b: BlockBuilder, coord: EmittedCoordinate, step: readonly number[]): void {
  const a = coord.adaptor;
  if (step.length !== a.numTopDims) throw new ArityMismatchError('emitted coordinate step', a.numTopDims, step.length);
  step.forEach((s, i) => {
    if (!Number.isSafeInteger(s)) throw new InvalidParameterError(`emitted coordinate step[${i}]`, 'must be a static integer', String(s));
  });
  const delta = new Map<number, SymInt>();
  const actions: Action[] = [];
  a.topDimHiddenIds.forEach((id, i) => {
    delta.set(id, step[i]!);
    const dim = coord.stored.get(id);
    if (dim !== undefined && step[i] !== 0) actions.push({ kind: 'add', dim, delta: step[i]! });
  });
  for (const i of a.transformsTouchedBy(step.map((s) => s !== 0))) {
    const t = a.transforms[i]!;
    const ups = a.upperDimHiddenIds[i]!;
    const lows = a.lowerDimHiddenIds[i]!;
    if (t.isLinear) {
      const moved = t.lowerSymbolic(ups.map((id) => delta.get(id) ?? 0));
      const still = t.lowerSymbolic(ups.map(() => 0));
      lows.forEach((id, j) => {
        const d = sub(moved[j]!, still[j]!);
        delta.set(id, d);
        const dim = coord.stored.get(id);
        if (dim !== undefined && d !== 0) actions.push({ kind: 'add', dim, delta: d });
      });
    } else {
      const values = t.lowerSymbolic(ups.map((id) => coord.stored.get(id)!.atom));
      lows.forEach((id, j) => {
        const dim = coord.stored.get(id)!;
        const v = intervalOf(values[j]!);
        const range = { lo: v.lo - dim.range.hi, hi: v.hi - dim.range.lo };
        const change = coord.emitter.declareVariable({ min: range.lo, max: range.hi });
        delta.set(id, change.value);
        actions.push({ kind: 'recompute', dim, value: values[j]!, delta: { name: change.name, range } });
      });
    }
  }
  // Declare a change temp only where a later linear update reads it.
  const used = new Set<string>();
  for (const act of actions) {
    if (act.kind === 'add')
      forEachAtom(act.delta, (x) => {
        if (x.kind === 'var') used.add(x.name);
      });
  }
  const emitter = coord.emitter;
  const memo: TempMemo = new Map();
  for (const act of actions) {
    if (act.kind === 'add') {
      b.assign(act.dim.variable, castTo(emitter.emit(b, act.delta, memo), act.dim.type), '+=');
    } else {
      const name = act.dim.variable.name;
      const n = b.let(`${name}_new`, act.dim.type, castTo(emitter.emit(b, act.value, memo), act.dim.type));
      if (used.has(act.delta.name)) {
        const type = indexTypeFor(act.delta.range, 'coordinate change');
        emitter.defineVariable(act.delta.name, b.let(`${name}_delta`, type, cSub(castTo(n, type), castTo(act.dim.variable, type))));
      }
      b.assign(act.dim.variable, n);
    }
  }
}

/**
 * CK's `coordinate_has_valid_offset_assuming_top_index_is_valid` on an emitted coordinate: the
 * padding predicates on its stored dims, as a `bool` expression (temps declared in `b`).
 */
export function emitCoordinateValid(b: BlockBuilder, coord: EmittedCoordinate): Expr {
  const a = coord.adaptor;
  const conditions: SymInt[] = [];
  a.transforms.forEach((t, i) => {
    if (!t.isAlwaysValid) conditions.push(...t.validitySymbolic(a.upperDimHiddenIds[i]!.map((id) => coord.stored.get(id)!.atom)));
  });
  const valid = coord.emitter.allNonNegative(b, conditions, new Map());
  return valid.kind === 'literal' ? valid : b.let('valid', bool, valid);
}
