// Command-line tokens a parser must reject at parse time, generated from its declarations, so each
// CLI's spec can check that every malformed flag is a one-line error before any work starts.
import type { ArgParser, FlagSpec } from '../argParser.ts';

/** A token that must fail to parse, and the flag its error must name (`ArgParseError.flag`). */
export interface BadFlagToken {
  readonly token: string;
  readonly flag: string;
}

/** The tokens one declared flag can be wrong by: no value, a value of the wrong form, a value outside its bounds or choices. */
function badTokensOf(spec: FlagSpec): string[] {
  const flag = `-${spec.key}`;
  const tokens = flag === '-h' ? [] : [flag]; // a bare -h asks for help

  if (spec.kind === 'int') tokens.push(`${flag}=abc`, `${flag}=1.5`);
  if (spec.kind === 'float') tokens.push(`${flag}=abc`, `${flag}=1e999`);
  if (spec.kind === 'bool') tokens.push(`${flag}=maybe`);
  if (spec.kind === 'choice') tokens.push(`${flag}=${(spec.choices ?? []).join('')}_not_a_choice`);
  if (spec.min !== undefined) tokens.push(`${flag}=${spec.min - 1}`);
  if (spec.max !== undefined) tokens.push(`${flag}=${spec.max + 1}`);
  return tokens;
}

/**
 * Tokens `parser` must reject, each naming its flag: an undeclared flag, and for every declared
 * flag a missing value, a value of the wrong form (int, float, bool), a value one past each bound,
 * and a value outside the choices. String flags' own checks are the spec's to exercise.
 */
export function badFlagTokens<T extends object>(parser: ArgParser<T>): BadFlagToken[] {
  const unknown = { token: '-no_such_flag=1', flag: '-no_such_flag' };
  return [unknown, ...parser.flags().flatMap((spec) => badTokensOf(spec).map((token) => ({ token, flag: `-${spec.key}` })))];
}
