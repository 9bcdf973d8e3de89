import type { SymInt } from '../symbolic/expr.ts';
import { PaddingTransform } from './pad.ts';
import { formatSymInt } from './transform.ts';

/**
 * `rightPad(L, right)`: `pad(L, 0, right)` checking only the right end: low = up, valid iff up < L
 * (unless `skipValidityCheck`). Vector rule: gcd(V, L), lower stride (CK copies V and leaves the
 * multiple-of-V condition to the caller; the gcd makes it hold).
 */
export class RightPad extends PaddingTransform {
  readonly kind = 'rightPad';

  constructor(length: SymInt, right: SymInt, skipValidityCheck = false) {
    super('rightPad', length, 0, right, { left: false, right: true }, skipValidityCheck);
  }

  toString(): string {
    return this.formatArguments(`right ${formatSymInt(this.right)}`);
  }
}

/** Pads a dim of length L by `right` invalid indices after it. */
export function rightPad(length: SymInt, right: SymInt, skipValidityCheck = false): RightPad {
  return new RightPad(length, right, skipValidityCheck);
}
