// A CK-style parser for an example that shares flags declared elsewhere (examples/attention-flags)
// but wants its own defaults for some of them, and a last line under its help text.
import { ArgParser, type FlagSpec } from '@tilekit/host';

type Empty = Record<never, never>;
type FlagValue = FlagSpec['defaultValue'];

/** An `ArgParser` whose help text ends with `footer` (one line: e.g. what the example does not do yet). */
export class ExampleArgParser<T extends object = Empty> extends ArgParser<T> {
  readonly footer: string;

  constructor(program: string, description: string, footer: string) {
    super(program, description);
    this.footer = footer;
  }

  override help(): string {
    return `${super.help()}\n${this.footer}`;
  }
}

/** `parser` with `spec` declared on it again: same key, kind, bounds, check, choices and description, default `value`. */
function declareLike(parser: ArgParser<object>, spec: FlagSpec, value: FlagValue): ArgParser<object> {
  const bounds = { ...(spec.min === undefined ? {} : { min: spec.min }), ...(spec.max === undefined ? {} : { max: spec.max }) };
  switch (spec.kind) {
    case 'int':
      return parser.int(spec.key, value as number, spec.description, bounds);
    case 'float':
      return parser.float(spec.key, value as number, spec.description, bounds);
    case 'string':
      return parser.string(spec.key, value as string, spec.description, spec.check);
    case 'bool':
      return parser.bool(spec.key, value as boolean, spec.description);
    case 'choice':
      return parser.choice(spec.key, value as string, spec.choices ?? [], spec.description);
  }
}

/**
 * Declares every flag of `from` on `into` (which has none yet), in order and as `from` declares
 * them, except that `defaults` replace some defaults — checked as any default is (bounds, choices,
 * the flag's text check; ArgumentError otherwise). Returns `into`, typed with `from`'s flags.
 */
export function redeclareFlags<T extends object>(from: ArgParser<T>, into: ArgParser<Empty>, defaults: Partial<T>): ArgParser<T> {
  const given = defaults as Readonly<Record<string, FlagValue | undefined>>;
  let parser: ArgParser<object> = into;
  for (const spec of from.flags()) parser = declareLike(parser, spec, given[spec.key] ?? spec.defaultValue);
  return parser as ArgParser<T>;
}
