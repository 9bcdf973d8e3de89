import type { ArgumentError } from '@tilekit/numeric';
import { ArgParseError, type ParsedArgs } from './argParser.ts';

/**
 * A library's ArgumentError about a value that came from a flag, as the one-line error of that
 * flag: `flagOf` maps the argument the library names (e.g. `problem.hdimQ`; an element such as
 * `problem.seqstartQ[3]` falls back to its array) to the flag key, and the message becomes
 * `-key=<value>: <the library's message>`. An argument `flagOf` does not know keeps its own name.
 * Postcondition (tested): the result's `flag` is `-key` for a mapped argument, else the argument.
 */
export function flagErrorOf<T extends object>(args: ParsedArgs<T>, error: ArgumentError, flagOf: Readonly<Record<string, keyof T & string>>): ArgParseError {
  const key = flagOf[error.argument] ?? flagOf[error.argument.replace(/\[\d+\]$/, '')];
  if (key === undefined) return new ArgParseError(error.argument, error.message);
  return new ArgParseError(`-${key}`, `-${key}=${String(args.get(key))}: ${error.message}`);
}
