import type { SymInt } from '../symbolic/expr.ts';
import { PaddingTransform } from './pad.ts';
import { formatSymInt } from './transform.ts';

/**
 * `leftPad(L, left)`: `pad(L, left, 0)` checking only the left end: valid iff up ≥ left (unless
 * `skipValidityCheck`). Vector rule: gcd(V, left), lower stride.
 */
export class LeftPad extends PaddingTransform {
  readonly kind = 'leftPad';

  constructor(length: SymInt, left: SymInt, skipValidityCheck = false) {
    super('leftPad', length, left, 0, { left: true, right: false }, skipValidityCheck);
  }

  toString(): string {
    return this.formatArguments(`left ${formatSymInt(this.left)}`);
  }
}

/** Pads a dim of length L by `left` invalid indices before it. */
export function leftPad(length: SymInt, left: SymInt, skipValidityCheck = false): LeftPad {
  return new LeftPad(length, left, skipValidityCheck);
}
