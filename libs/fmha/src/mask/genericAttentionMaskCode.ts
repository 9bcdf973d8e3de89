import {
  add,
  and,
  cast,
  div,
  ge,
  gt,
  int32,
  isExpr,
  le,
  lt,
  maxOf,
  minOf,
  mul,
  or,
  select,
  sub,
  type Expr,
  type ExprLike,
} from '@tilekit/codegen';
import { AttentionMaskError, type MaskAlignment } from './attentionMaskSpec.ts';

/**
 * A mask spec whose sizes may be runtime values (kernel arguments): the same shapes as
 * `AttentionMaskSpec`, with numbers or int32 expressions, and a window's alignment either static or a
 * `bool` expression that is true for top-left. Any `AttentionMaskSpec` is one (everything folds).
 */
export type AttentionMaskCodeSpec =
  | { readonly kind: 'none' }
  | { readonly kind: 'window'; readonly alignment: MaskAlignment | Expr; readonly left: ExprLike; readonly right: ExprLike }
  | { readonly kind: 'generic'; readonly y: ExprLike; readonly x: ExprLike };

/** The start and end (exclusive, both tile-aligned int32 expressions) of the key tiles to visit. */
export interface KeyRangeCode {
  readonly start: Expr;
  readonly end: Expr;
}

const i32 = (v: ExprLike): Expr => cast(v, int32);

function checkTile(where: string, v: unknown): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1 || v > 2 ** 20)
    throw new AttentionMaskError(where, 'must be an integer in [1, 2^20]', v);
  return v;
}

/**
 * `size < 0 || size > far ? far : size` (folded when `size` is a number). A static 0 (causal's right
 * edge) stays 0: it differs from the clamp only when the far corner is −1, an empty sequence.
 */
function clampSize(size: ExprLike, far: Expr): Expr {
  if (!isExpr(size)) return Number(size) < 0 ? far : Number(size) === 0 ? i32(0) : minOf(i32(size), far);
  return select(or(lt(size, 0), gt(size, far)), far, i32(size));
}

/** Floor and ceiling to a multiple of n, exact for v ≥ 0 (C++ division truncates toward zero). */
const floorTo = (v: Expr, n: number): Expr => mul(div(v, n), n);
const ceilTo = (v: Expr, n: number): Expr => mul(div(add(v, n - 1), n), n);

/**
 * The emitted twin of `GenericAttentionMask`: the same queries as int32/bool C++ expressions of
 * runtime values (row and column indices, seqlens, window sizes). Every method returns pure
 * expressions that may repeat their inputs; bind `y` and `x` (and the seqlens) to locals first
 * (`new GenericAttentionMaskCode({ ...m, y: b.let('mask_y', int32, m.y), ... })`) when they are big.
 * Postcondition (tested by compiling with g++ over random shapes, windows and tiles): each result
 * equals the TS model's for the same values.
 */
export class GenericAttentionMaskCode {
  readonly masking: boolean;
  readonly y: Expr;
  readonly x: Expr;
  readonly seqlenQ: Expr;
  readonly seqlenK: Expr;

  constructor(parts: {
    readonly masking: boolean;
    readonly y: ExprLike;
    readonly x: ExprLike;
    readonly seqlenQ: ExprLike;
    readonly seqlenK: ExprLike;
  }) {
    this.masking = parts.masking;
    this.y = i32(parts.y);
    this.x = i32(parts.x);
    this.seqlenQ = i32(parts.seqlenQ);
    this.seqlenK = i32(parts.seqlenK);
    Object.freeze(this);
  }

  /** `bool`: is (i, j) masked (outside the sequences, or outside the row's kept keys)? */
  isMasked(i: ExprLike, j: ExprLike): Expr {
    const [ii, jj] = [i32(i), i32(j)];
    const outside = or(or(lt(ii, 0), ge(ii, this.seqlenQ)), or(lt(jj, 0), ge(jj, this.seqlenK)));
    if (!this.masking) return outside;
    return or(outside, or(le(jj, sub(ii, this.y)), ge(jj, add(ii, this.x))));
  }

  /**
   * `isMasked` for indices known to be ≥ 0 (tile origins plus in-tile offsets): the same answer
   * with two comparisons fewer, for per-element masking in register-tight loops.
   */
  isMaskedNonNegative(i: ExprLike, j: ExprLike): Expr {
    const [ii, jj] = [i32(i), i32(j)];
    const outside = or(ge(ii, this.seqlenQ), ge(jj, this.seqlenK));
    if (!this.masking) return outside;
    return or(outside, or(le(jj, sub(ii, this.y)), ge(jj, add(ii, this.x))));
  }

  /** `int` start and end of the key tiles rows [i0, i0 + tileM) visit (`GenericAttentionMask.getTileRangeAlongX`). */
  getTileRangeAlongX(i0: ExprLike, tileM: number, tileN: number): KeyRangeCode {
    checkTile('tileM', tileM);
    checkTile('tileN', tileN);
    const top = i32(i0);
    const firstInSeq = maxOf(top, 0);
    const lastInSeq = minOf(add(top, tileM - 1), sub(this.seqlenQ, 1));
    if (!this.masking) {
      const visits = and(le(firstInSeq, lastInSeq), gt(this.seqlenK, 0));
      return { start: i32(0), end: select(visits, ceilTo(this.seqlenK, tileN), 0) };
    }
    const first = maxOf(firstInSeq, sub(1, this.x));
    const last = minOf(lastInSeq, add(this.seqlenK, sub(this.y, 2)));
    // x + y ≥ 2 written as x ≥ 2 − y: x + y itself can reach 2^31.
    const visits = and(and(le(first, last), ge(this.x, sub(2, this.y))), gt(this.seqlenK, 0));
    const lo = maxOf(add(sub(first, this.y), 1), 0);
    const hi = minOf(add(last, this.x), this.seqlenK);
    return { start: select(visits, floorTo(lo, tileN), 0), end: select(visits, ceilTo(hi, tileN), 0) };
  }

  /** `getTileRangeAlongX` cut to split `iSplit` of `numSplits` (`GenericAttentionMask.getTileRangeAlongXForSplit`). */
  getTileRangeAlongXForSplit(i0: ExprLike, tileM: number, tileN: number, numSplits: ExprLike, iSplit: ExprLike): KeyRangeCode {
    const { start, end } = this.getTileRangeAlongX(i0, tileM, tileN);
    const perSplit = ceilTo(div(add(this.seqlenK, sub(i32(numSplits), 1)), i32(numSplits)), tileN);
    const splitStart = mul(i32(iSplit), perSplit);
    const s = maxOf(start, splitStart);
    const e = minOf(end, add(splitStart, perSplit));
    const nonEmpty = gt(e, s);
    return { start: select(nonEmpty, s, 0), end: select(nonEmpty, e, 0) };
  }

  /** `int` start and end of the query tiles key columns [j0, j0 + tileN) visit (`GenericAttentionMask.getTileRangeAlongY`). */
  getTileRangeAlongY(j0: ExprLike, tileN: number, tileM: number): KeyRangeCode {
    checkTile('tileN', tileN);
    checkTile('tileM', tileM);
    const left = i32(j0);
    const first = maxOf(left, 0);
    const last = minOf(add(left, tileN - 1), sub(this.seqlenK, 1));
    const lo = this.masking ? maxOf(add(sub(first, this.x), 1), 0) : i32(0);
    const hi = this.masking ? minOf(sub(add(last, this.y), 1), sub(this.seqlenQ, 1)) : sub(this.seqlenQ, 1);
    // x + y ≥ 2 written as x ≥ 2 − y: x + y reaches 2^31 when both sequences are 2^30 long.
    const visits = and(and(le(first, last), le(lo, hi)), this.masking ? ge(this.x, sub(2, this.y)) : gt(this.seqlenQ, 0));
    return { start: select(visits, floorTo(lo, tileM), 0), end: select(visits, ceilTo(add(hi, 1), tileM), 0) };
  }

  /** `bool`: does the tile at (i0, j0) need per-element masking (`GenericAttentionMask.isEdgeTile`)? */
  isEdgeTile(i0: ExprLike, j0: ExprLike, tileM: number, tileN: number): Expr {
    checkTile('tileM', tileM);
    checkTile('tileN', tileN);
    const [top, left] = [i32(i0), i32(j0)];
    const first = maxOf(top, 0);
    const last = minOf(add(top, tileM - 1), sub(this.seqlenQ, 1));
    const lowerOfLast = this.masking ? maxOf(add(sub(last, this.y), 1), 0) : i32(0);
    const upperOfFirst = this.masking ? minOf(add(first, this.x), this.seqlenK) : this.seqlenK;
    return and(le(first, last), or(gt(lowerOfLast, left), lt(upperOfFirst, add(left, tileN))));
  }
}

/**
 * The emitted mask of `spec` for runtime seqlens (int32 expressions or numbers): CK's
 * `make_generic_attention_mask_coordinates_from_lr_window`, with the same clamping as
 * `maskCoordinates` (a size < 0 or beyond the far corner reaches the far corner; generic (y, x)
 * clamped to [−sk, sq] × [−sq, sk]), so no intermediate overflows int32 for seqlens ≤ 2^30.
 */
export function emitGenericAttentionMask(spec: AttentionMaskCodeSpec, seqlenQ: ExprLike, seqlenK: ExprLike): GenericAttentionMaskCode {
  const [sq, sk] = [i32(seqlenQ), i32(seqlenK)];
  switch (spec.kind) {
    case 'none':
      return new GenericAttentionMaskCode({ masking: false, y: sq, x: sk, seqlenQ: sq, seqlenK: sk });
    case 'window': {
      const { alignment } = spec;
      const pick = (topLeft: Expr, bottomRight: Expr): Expr =>
        isExpr(alignment) ? select(alignment, topLeft, bottomRight) : alignment === 'topLeft' ? topLeft : bottomRight;
      const left = clampSize(spec.left, pick(sub(sq, 1), sub(sk, 1)));
      const right = clampSize(spec.right, pick(sub(sk, 1), sub(sq, 1)));
      const y = add(add(left, 1), pick(i32(0), sub(sq, sk)));
      const x = add(add(right, 1), pick(i32(0), sub(sk, sq)));
      return new GenericAttentionMaskCode({ masking: true, y, x, seqlenQ: sq, seqlenK: sk });
    }
    case 'generic': {
      const y = minOf(maxOf(i32(spec.y), sub(0, sk)), sq);
      const x = minOf(maxOf(i32(spec.x), sub(0, sq)), sk);
      return new GenericAttentionMaskCode({ masking: true, y, x, seqlenQ: sq, seqlenK: sk });
    }
    default:
      throw new AttentionMaskError('spec.kind', 'must be one of none, window, generic', (spec as { kind?: unknown }).kind);
  }
}
