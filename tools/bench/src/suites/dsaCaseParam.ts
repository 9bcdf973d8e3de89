// A dsa case's integer param, read back from its record: a positive safe integer, or an error naming the case and key.
import type { SuiteCase } from '../benchSuite.ts';

/** `c.params[key]` as a positive integer. */
export function dsaCaseParam(c: SuiteCase, key: string): number {
  const value = c.params[key];
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1)
    throw new Error(`dsa case ${c.name}: params.${key} must be a positive integer, not ${String(value)}`);
  return value;
}
