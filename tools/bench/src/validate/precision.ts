import { ArgumentError } from '@tilekit/numeric';

/** The precision an output is judged at: a float format's rounding, or bit-exact (copies, permutes). */
export type Precision = 'fp16' | 'bf16' | 'fp32' | 'exact';

/** Every {@link Precision}. */
export const PRECISIONS: readonly Precision[] = ['fp16', 'bf16', 'fp32', 'exact'];

/** Stored fraction bits of each float precision. */
const FRACTION_BITS = { fp16: 10, bf16: 7, fp32: 23 } as const;

/**
 * The unit roundoff u = 2^−(p+1) of a precision with p fraction bits (fp16 2^−11, bf16 2^−8,
 * fp32 2^−24): the largest relative error of rounding once to nearest. 0 for `exact`.
 * @throws ArgumentError naming `argument` when `precision` is not a {@link Precision}.
 */
export function unitRoundoff(precision: Precision, argument = 'precision'): number {
  if (precision === 'exact') return 0;
  if (!Object.hasOwn(FRACTION_BITS, precision)) throw new ArgumentError(argument, `must be one of ${PRECISIONS.join(', ')}`, precision);
  return 2 ** -(FRACTION_BITS[precision] + 1);
}
