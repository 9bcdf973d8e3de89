import { InvalidParameterError } from '../errors.ts';
import { ceilDivInt, floorDivInt } from '../integerMath.ts';
import { formatSymInt, fromAtom, type SymExpr, type SymInt, type SymbolDomain } from './expr.ts';

const identifier = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Largest value of a signed 32-bit kernel argument. */
export const INT32_MAX = 2 ** 31 - 1;

/**
 * A named kernel argument as a symbolic integer. The domain defaults to a positive int32
 * (`min` 1, `max` 2^31 − 1, `multipleOf` 1); declare tighter bounds where known (they decide the
 * emitted index width and enable simplifications, and every binding is checked against them).
 * The name must be a C identifier: it is emitted as one.
 */
export function symbol(name: string, domain: Partial<SymbolDomain> = {}): SymExpr {
  if (!identifier.test(name)) throw new InvalidParameterError('symbol name', 'must be a C identifier', JSON.stringify(name));
  const multipleOf = domain.multipleOf ?? 1;
  if (!Number.isSafeInteger(multipleOf) || multipleOf < 1) {
    throw new InvalidParameterError(`symbol ${name}: multipleOf`, 'must be an integer ≥ 1', String(multipleOf));
  }
  const rawMin = domain.min ?? 1;
  const rawMax = domain.max ?? INT32_MAX;
  if (!Number.isSafeInteger(rawMin) || !Number.isSafeInteger(rawMax)) {
    throw new InvalidParameterError(`symbol ${name}: min/max`, 'must be safe integers', `[${rawMin}, ${rawMax}]`);
  }
  const min = ceilDivInt(rawMin, multipleOf) * multipleOf;
  const max = floorDivInt(rawMax, multipleOf) * multipleOf;
  if (min > max)
    throw new InvalidParameterError(`symbol ${name}: domain`, 'must contain a value', `[${rawMin}, ${rawMax}] multiples of ${multipleOf}`);
  return fromAtom({ kind: 'symbol', name, min, max, multipleOf, key: `$${name}` });
}

/**
 * An index variable (used by emission and its tests): `[min, max]` is its honest range; with an
 * `extent`, simplifications may assume 0 ≤ value < extent.
 */
export function indexVar(name: string, range: { min: number; max: number; extent?: SymInt }): SymExpr {
  if (!identifier.test(name)) throw new InvalidParameterError('index variable name', 'must be a C identifier', JSON.stringify(name));
  if (range.min > range.max) throw new InvalidParameterError(`index variable ${name}`, 'min ≤ max', `[${range.min}, ${range.max}]`);
  const extent = range.extent;
  return fromAtom({ kind: 'var', name, min: range.min, max: range.max, extent, key: `%${name}` });
}

/** Readable text of a SymInt (alias of formatSymInt for the barrel). */
export function symIntToString(x: SymInt): string {
  return formatSymInt(x);
}
