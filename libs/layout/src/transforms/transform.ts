import { ArityMismatchError, InvalidLengthError, InvalidParameterError } from '../errors.ts';
import { gcd } from '../integerMath.ts';
import { divisorOf } from '../symbolic/bounds.ts';
import { sub } from '../symbolic/poly.ts';
import { proveNonNegative } from '../symbolic/simplify.ts';
import { checkBindings, evaluateSymInt, freeSymbols, NO_BINDINGS, type Bindings } from '../symbolic/evaluate.ts';
import { formatSymInt, type SymInt, type SymbolAtom } from '../symbolic/expr.ts';

/** The transform primitives (CK-tile `coordinate_transform.hpp`). */
export type TransformKind =
  | 'passThrough'
  | 'pad'
  | 'leftPad'
  | 'rightPad'
  | 'embed'
  | 'merge'
  | 'unmerge'
  | 'freeze'
  | 'insert'
  | 'replicate'
  | 'slice'
  | 'modulo'
  | 'xor'
  | 'offset';

/** Per-dimension vector facts: `lengths[i]` consecutive indices (from an aligned start) move the offset by `strides[i]` each; −1 = unknown. */
export interface VectorLengthsStrides {
  readonly lengths: readonly number[];
  readonly strides: readonly number[];
}

/**
 * One transform with all symbols bound and its hidden ids fixed: it reads `h[up]` and writes `h[low]`
 * of a hidden index vector `h` (the representation coordinates keep).
 */
export interface TransformStep {
  /** h[low] := lower(h[up]). */
  lower(h: number[]): void;
  /**
   * CK's `update_lower_index`: `h[up]` already holds the new upper index and `dh[up]` its change;
   * writes the new lower index into `h[low]` and its change into `dh[low]`. Linear transforms
   * propagate the change; merge/xor/modulo recompute from the new upper index.
   */
  update(h: number[], dh: number[]): void;
  /** The runtime validity predicate on h[up] (always true for always-valid transforms). */
  valid(h: number[]): boolean;
}

/**
 * A coordinate transform: maps an upper index (nearer the user) of `upperArity` dims to a lower
 * index (nearer memory) of `lowerArity` dims. Parameters are SymInts; `compile` binds them.
 *
 * Contracts the tests check, for every upper index `u` inside `upperLengths`:
 * - `calculateLowerIndex` agrees with `lowerSymbolic` evaluated under the same bindings;
 * - `updateLowerIndex(d, u + d, lower(u))` = `lower(u + d)` and its diff;
 * - `isAlwaysValid` ⇒ `isValidUpperIndex(u)`; the pads' predicate is exactly "lower index in range".
 */
export interface Transform {
  readonly kind: TransformKind;
  readonly lowerArity: number;
  readonly upperArity: number;
  /** Length of each upper dim. */
  readonly upperLengths: readonly SymInt[];
  /** Length of each lower dim where the transform defines one (undefined for embed/freeze/offset). */
  readonly lowerLengths: readonly (SymInt | undefined)[];
  /** The static promise: every upper index inside `upperLengths` maps to a valid lower index. */
  readonly isAlwaysValid: boolean;
  /** Whether the lower index is an affine function of the upper one (moves propagate deltas). */
  readonly isLinear: boolean;
  /** Whether every parameter is a number. */
  readonly isStatic: boolean;
  /** Symbols the parameters mention. */
  readonly symbols: ReadonlyMap<string, SymbolAtom>;
  /** Binds the parameters (checked against the symbols' domains) and fixes hidden ids. */
  compile(bindings: Bindings, up: readonly number[], low: readonly number[]): TransformStep;
  /** Lower index as SymInts of the upper index (floor division/modulo, two's-complement xor). */
  lowerSymbolic(up: readonly SymInt[]): SymInt[];
  /** The runtime validity predicate as conditions, each required to be ≥ 0 (empty when always valid). */
  validitySymbolic(up: readonly SymInt[]): SymInt[];
  /** CK's vector rule: upper dims' safe vector lengths/strides from the lower dims' (−1 = unknown). */
  upperVectorLengthsStrides(lower: VectorLengthsStrides): VectorLengthsStrides;
  /** Readable form, e.g. `merge(4, 8)`. */
  toString(): string;
  /** Convenience: lower index of one upper index. */
  calculateLowerIndex(up: readonly number[], bindings?: Bindings): number[];
  /** Convenience: CK's `update_lower_index` on plain arrays. */
  updateLowerIndex(
    dUp: readonly number[],
    upNew: readonly number[],
    lowOld: readonly number[],
    bindings?: Bindings,
  ): { dLow: number[]; lowNew: number[] };
  /** Convenience: the runtime validity predicate. */
  isValidUpperIndex(up: readonly number[], bindings?: Bindings): boolean;
}

const range = (n: number, from = 0): number[] => Array.from({ length: n }, (_, i) => from + i);

/** Shared plumbing: symbol collection, binding, convenience methods. */
export abstract class TransformBase implements Transform {
  abstract readonly kind: TransformKind;
  abstract readonly lowerArity: number;
  abstract readonly upperArity: number;
  abstract readonly upperLengths: readonly SymInt[];
  abstract readonly lowerLengths: readonly (SymInt | undefined)[];
  abstract readonly isAlwaysValid: boolean;
  abstract readonly isLinear: boolean;
  readonly symbols: ReadonlyMap<string, SymbolAtom>;
  readonly isStatic: boolean;

  protected constructor(parameters: readonly SymInt[]) {
    this.symbols = freeSymbols(parameters);
    this.isStatic = parameters.every((p) => typeof p === 'number');
  }

  /** Evaluates the numeric parameters for `bindings` (domain-checked). */
  protected values(parameters: readonly SymInt[], bindings: Bindings): number[] {
    if (this.isStatic) return parameters as number[];
    checkBindings(this.symbols, bindings);
    return parameters.map((p) => evaluateSymInt(p, bindings));
  }

  abstract compile(bindings: Bindings, up: readonly number[], low: readonly number[]): TransformStep;
  abstract lowerSymbolic(up: readonly SymInt[]): SymInt[];
  abstract upperVectorLengthsStrides(lower: VectorLengthsStrides): VectorLengthsStrides;
  abstract toString(): string;

  validitySymbolic(_up: readonly SymInt[]): SymInt[] {
    return [];
  }

  calculateLowerIndex(up: readonly number[], bindings: Bindings = NO_BINDINGS): number[] {
    checkArity(`${this.kind} upper index`, this.upperArity, up.length);
    const nu = this.upperArity;
    const h = [...up, ...new Array<number>(this.lowerArity).fill(0)];
    this.compile(bindings, range(nu), range(this.lowerArity, nu)).lower(h);
    return h.slice(nu);
  }

  updateLowerIndex(
    dUp: readonly number[],
    upNew: readonly number[],
    lowOld: readonly number[],
    bindings: Bindings = NO_BINDINGS,
  ): { dLow: number[]; lowNew: number[] } {
    checkArity(`${this.kind} upper diff`, this.upperArity, dUp.length);
    checkArity(`${this.kind} upper index`, this.upperArity, upNew.length);
    checkArity(`${this.kind} lower index`, this.lowerArity, lowOld.length);
    const nu = this.upperArity;
    const h = [...upNew, ...lowOld];
    const dh = [...dUp, ...new Array<number>(this.lowerArity).fill(0)];
    this.compile(bindings, range(nu), range(this.lowerArity, nu)).update(h, dh);
    return { dLow: dh.slice(nu), lowNew: h.slice(nu) };
  }

  isValidUpperIndex(up: readonly number[], bindings: Bindings = NO_BINDINGS): boolean {
    checkArity(`${this.kind} upper index`, this.upperArity, up.length);
    return this.compile(bindings, range(this.upperArity), range(this.lowerArity, this.upperArity)).valid([
      ...up,
      ...new Array<number>(this.lowerArity).fill(0),
    ]);
  }
}

/** Throws a typed arity error unless `found === expected`. */
export function checkArity(what: string, expected: number, found: number): void {
  if (expected !== found) throw new ArityMismatchError(what, expected, found);
}

/** A length: a safe integer ≥ 1, or a SymInt provably ≥ 1. */
export function checkLength(x: SymInt, what: string): SymInt {
  if (typeof x === 'number' ? !Number.isSafeInteger(x) || x < 1 : !proveNonNegative(sub(x, 1), 'honest'))
    throw new InvalidLengthError(what, formatSymInt(x));
  return x;
}

/** A non-negative integer parameter (pad amount, slice begin, frozen index…). */
export function checkNonNegative(x: SymInt, what: string): SymInt {
  if (typeof x === 'number' ? !Number.isSafeInteger(x) || x < 0 : !proveNonNegative(x, 'honest')) {
    throw new InvalidParameterError(what, 'must be an integer ≥ 0', formatSymInt(x));
  }
  return x;
}

/** Any integer parameter (embed coefficient, offset). */
export function checkInteger(x: SymInt, what: string): SymInt {
  if (typeof x === 'number' && !Number.isSafeInteger(x)) throw new InvalidParameterError(what, 'must be a safe integer', String(x));
  return x;
}

/** gcd(v, divisor of x): the largest vector length that keeps alignment after shifting by x; −1 stays unknown. */
export function vectorGcd(v: number, x: SymInt): number {
  if (v < 0) return -1;
  return gcd(v, divisorOf(x));
}

/** Unknown vector facts for n dims. */
export function unknownVectors(n: number): VectorLengthsStrides {
  return { lengths: new Array<number>(n).fill(-1), strides: new Array<number>(n).fill(-1) };
}

/** `(a, b, c)` */
export function formatList(xs: readonly SymInt[]): string {
  return xs.map(formatSymInt).join(', ');
}

export { formatSymInt };
