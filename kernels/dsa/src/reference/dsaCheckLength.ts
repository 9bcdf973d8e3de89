// Argument checks shared by the CPU references (internal: not re-exported from the package).
import { DsaArgumentError } from '../dsaArgumentError.ts';

/** Throws unless `value` is a safe integer ≥ `min` (a count or size argument). */
export function dsaCheckCount(argument: string, value: number, min = 1): void {
  if (!Number.isSafeInteger(value) || value < min) throw new DsaArgumentError(argument, `must be an integer ≥ ${min}`, value);
}

/** Throws unless `array` holds exactly `expected` elements (`what` names the product, e.g. `S·H·128`). */
export function dsaCheckLength(argument: string, array: ArrayLike<number>, expected: number, what: string): void {
  if (array.length !== expected) throw new DsaArgumentError(argument, `must hold ${what} = ${expected} elements`, array.length);
}

/** Throws unless every element of `array` is finite (names the first offender, e.g. `weights[17]`). */
export function dsaCheckFinite(argument: string, array: ArrayLike<number>): void {
  for (let i = 0; i < array.length; i++) {
    if (!Number.isFinite(array[i]!)) throw new DsaArgumentError(`${argument}[${i}]`, 'must be finite', array[i]);
  }
}
