// The selection key of one logit, in TS and as emitted code: the order-preserving uint32 image of
// the value (dsaOrderedKey) with −0 taken as +0, and 0 for a position that is no candidate.
import { add, bitOr, bitXor, call, cast, f32, int32, le, select, shr, sub, uint32, type BlockBuilder, type Expr } from '@tilekit/codegen';
import { dsaOrderedKey } from '../reference/dsaOrderedKey.ts';

/** The smallest key of a candidate: that of −FLT_MAX (−∞ maps to 0x007FFFFF, negative NaNs below it). */
export const DSA_TOPK_MIN_CANDIDATE_KEY = 0x0080_0000;

/** The largest key of a candidate: that of +∞ (positive NaNs map above it). */
export const DSA_TOPK_MAX_CANDIDATE_KEY = 0xff80_0000;

/**
 * The selection key of an fp32 logit: {@link dsaOrderedKey} of the value with −0 read as +0 (the
 * contract compares values, and −0 = +0, so the two must tie and go by position), or 0 when the
 * value is no candidate (−∞ or NaN). Postcondition (property-tested): for candidates x, y,
 * x < y ⇔ key(x) < key(y) and x = y ⇔ key(x) = key(y); every candidate's key is > 0.
 */
export function dsaTopkKey(value: number): number {
  const key = dsaOrderedKey(value === 0 ? 0 : value);
  return key >= DSA_TOPK_MIN_CANDIDATE_KEY && key <= DSA_TOPK_MAX_CANDIDATE_KEY ? key : 0;
}

/**
 * Emits the key of `value` (a float32 expression) as {@link dsaTopkKey} computes it: value + 0
 * (−0 becomes +0) → bits ^ (sign ? ~0 : 1<<31) → 0 outside [DSA_TOPK_MIN_CANDIDATE_KEY,
 * DSA_TOPK_MAX_CANDIDATE_KEY] (−∞, NaN). Positions past a row load as −∞. Returns a const uint32.
 */
export function emitDsaTopkKey(b: BlockBuilder, name: string, value: Expr): Expr {
  const bits = b.let(`${name}_bits`, uint32, call('__float_as_uint', [add(value, f32(0))], uint32, { pure: true }));
  const flip = cast(bitOr(cast(shr(cast(bits, int32), 31), uint32), 0x8000_0000), uint32);
  const ordered = b.let(`${name}_ord`, uint32, bitXor(bits, flip));
  const span = DSA_TOPK_MAX_CANDIDATE_KEY - DSA_TOPK_MIN_CANDIDATE_KEY;
  return b.let(name, uint32, select(le(cast(sub(ordered, DSA_TOPK_MIN_CANDIDATE_KEY), uint32), span), ordered, 0));
}
