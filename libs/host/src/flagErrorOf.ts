import { ArgumentError } from '@tilekit/numeric';
import { ArgParseError, type ParsedArgs } from './argParser.ts';
import { ruleOf, withoutEcho } from './flagMessage.ts';

/** One broken rule as a validator that reports several lists it (`ArgumentError.problems`, where present). */
interface Problem {
  readonly argument: string;
  readonly rule: string;
  readonly found?: unknown;
}

type FlagOf<T extends object> = Readonly<Record<string, keyof T & string>>;

/**
 * A library's ArgumentError about a value that came from a flag, as the one-line error of that
 * flag: `flagOf` maps the argument the library names (e.g. `problem.hdimQ`; an element such as
 * `problem.seqstartQ[3]` falls back to its array) to the flag key, and the message becomes
 * `-key=<value>: <the library's rule>` — the argument is dropped when it maps exactly (kept for an
 * element), and so is any `(got <value>)` that repeats the flag's value. An error listing several
 * problems (`problems`) becomes `N problems: <clause>; <clause>`, each clause so mapped.
 * Postcondition (tested): the result's `flag` is `-key` for a mapped (first) argument, else the
 * argument; the message is one line and states the flag's value once.
 */
export function flagErrorOf<T extends object>(args: ParsedArgs<T>, error: ArgumentError, flagOf: FlagOf<T>): ArgParseError {
  const problems = (error as { readonly problems?: readonly Problem[] }).problems ?? [];
  if (problems.length < 2) return singleFlagError(args, error, flagOf);
  const each = problems.map((p) => singleFlagError(args, new ArgumentError(p.argument, p.rule, p.found), flagOf));
  return new ArgParseError(each[0]!.flag, `${each.length} problems: ${each.map((e) => e.message).join('; ')}`);
}

function singleFlagError<T extends object>(args: ParsedArgs<T>, error: ArgumentError, flagOf: FlagOf<T>): ArgParseError {
  const exact = flagOf[error.argument];
  const key = exact ?? flagOf[error.argument.replace(/\[\d+\]$/, '')];
  if (key === undefined) return new ArgParseError(error.argument, error.message);
  const value = String(args.get(key));
  const rule = exact !== undefined ? ruleOf(error, value) : withoutEcho(error.message, value);
  return new ArgParseError(`-${key}`, `-${key}=${value}: ${rule}`);
}
