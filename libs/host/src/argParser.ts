import { ArgumentError } from '@tilekit/numeric';
import { ruleOf } from './flagMessage.ts';
import { runCommand, type CliIo } from './runCommand.ts';
import { formatTable } from './table.ts';

/**
 * A command line the user got wrong: an unknown flag, a flag without `=value`, a value of the
 * wrong form, or a stray positional argument. The message is one line that names the flag
 * (e.g. `-b=abc: expected an integer`), fit to print as is; `flag` holds the flag as typed
 * (`-b`), without its value.
 */
export class ArgParseError extends ArgumentError {
  override readonly code: string = 'host/arg-parse';
  readonly flag: string;

  constructor(flag: string, message: string) {
    super(flag, message);
    this.message = message;
    this.flag = flag;
  }
}

/** The value kinds a flag can have. */
export type FlagKind = 'int' | 'float' | 'string' | 'bool' | 'choice';

/** Bounds of an `int` or `float` flag, inclusive, checked at parse time (e.g. sizes: `{ min: 1 }`). */
export interface NumberBounds {
  readonly min?: number;
  readonly max?: number;
}

/**
 * A parse-time check of a `string` flag's text (a fill spec, a mask, a list): returns when the text
 * is well formed, throws an ArgParseError or ArgumentError stating the rule when it is not.
 */
export type TextCheck = (text: string) => void;

/** What `ArgParser.restrict` adds to a declared flag: bounds (int, float) or a check (string). */
export interface FlagRule extends NumberBounds {
  readonly check?: TextCheck;
}

/** One declared flag, as listed by `ArgParser.flags()` and the help text. */
export interface FlagSpec extends FlagRule {
  readonly key: string;
  readonly kind: FlagKind;
  readonly defaultValue: number | string | boolean;
  readonly description: string;
  /** The allowed values of a `choice` flag. */
  readonly choices?: readonly string[];
}

type FlagValue = number | string | boolean;
type Values = Record<string, FlagValue>;
type Empty = Record<never, never>;
type With<T, K extends string, V> = T & { [P in K]: V };

const KEY_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;
const INT_PATTERN = /^[+-]?\d+$/;
const HELP_TOKENS = new Set(['-?', '-h', '--help']);

/**
 * A CK-tile-style command-line parser (`ck_tile::ArgParser`): flags are declared with a default
 * and a description, and written only as `-key=value`; `-?` (also bare `-h` and `--help`) asks for
 * help. Declarations chain and accumulate the value types, so `parse(argv).get('b')` is typed:
 *
 * ```ts
 * const parser = new ArgParser('tile_example_gemm', 'basic gemm')
 *   .int('m', 3840, 'm dimension').choice('prec', 'fp16', ['fp16', 'bf16'], 'data type');
 * const args = parser.parse(['-m=128']);  // args.get('prec'): 'fp16' | 'bf16'
 * ```
 *
 * Numeric flags may take bounds and string flags a check (`.int('b', 2, 'batch', { min: 1 })`,
 * `.string('init', 'uf', 'fill', checkFill)`; `restrict` adds them to a flag declared elsewhere), so
 * a bad value is reported at parse time, before any work: `-b=0: must be at least 1`.
 *
 * Postconditions (tested): every declared flag parses back from `-key=<its default>` to its
 * default; a later occurrence of a flag overrides an earlier one (as in CK); every malformed
 * command line — including an int below its minimum or above its maximum and a string its check
 * rejects — raises ArgParseError with a one-line message naming the flag; the help lists every
 * flag with its default, bounds and description. Declaring a flag twice, a key that is not an
 * identifier, a default of the wrong kind or outside its bounds, or bounds of the wrong kind
 * raises ArgumentError (a programming error).
 */
export class ArgParser<T extends object = Empty> {
  readonly program: string;
  readonly description: string;
  private readonly specs = new Map<string, FlagSpec>();

  constructor(program: string, description = '') {
    this.program = program;
    this.description = description;
  }

  /** An integer flag (safe integers, optional sign, decimal), optionally bounded (inclusive). */
  int<K extends string>(key: K, defaultValue: number, description: string, bounds: NumberBounds = {}): ArgParser<With<T, K, number>> {
    if (!Number.isSafeInteger(defaultValue)) throw new ArgumentError(`int -${key}`, 'default must be a safe integer', defaultValue);
    return this.declare({ key, kind: 'int', defaultValue, description, ...definedBounds(bounds) });
  }

  /** A finite floating-point flag (anything JS's Number() reads as finite, e.g. `1e-3`), optionally bounded (inclusive). */
  float<K extends string>(key: K, defaultValue: number, description: string, bounds: NumberBounds = {}): ArgParser<With<T, K, number>> {
    if (!Number.isFinite(defaultValue)) throw new ArgumentError(`float -${key}`, 'default must be finite', defaultValue);
    return this.declare({ key, kind: 'float', defaultValue, description, ...definedBounds(bounds) });
  }

  /** A free-form string flag (the empty string is allowed: `-kname=`), optionally checked at parse time. */
  string<K extends string>(key: K, defaultValue: string, description: string, check?: TextCheck): ArgParser<With<T, K, string>> {
    if (typeof defaultValue !== 'string') throw new ArgumentError(`string -${key}`, 'default must be a string', defaultValue);
    return this.declare({ key, kind: 'string', defaultValue, description, ...(check === undefined ? {} : { check }) });
  }

  /** A boolean flag, written `-key=1|0|true|false`. */
  bool<K extends string>(key: K, defaultValue: boolean, description: string): ArgParser<With<T, K, boolean>> {
    if (typeof defaultValue !== 'boolean') throw new ArgumentError(`bool -${key}`, 'default must be a boolean', defaultValue);
    return this.declare({ key, kind: 'bool', defaultValue, description });
  }

  /** A flag whose value must be one of `choices` (matched exactly); typed as their union. */
  choice<K extends string, const C extends string>(
    key: K,
    defaultValue: NoInfer<C>,
    choices: readonly C[],
    description: string,
  ): ArgParser<With<T, K, C>> {
    if (choices.length === 0 || new Set(choices).size !== choices.length) {
      throw new ArgumentError(`choice -${key}`, 'choices must be a non-empty list without repeats', choices);
    }
    if (!choices.includes(defaultValue)) {
      throw new ArgumentError(`choice -${key}`, `default must be one of ${choices.join(', ')}`, defaultValue);
    }
    return this.declare({ key, kind: 'choice', defaultValue, description, choices: [...choices] });
  }

  /**
   * Tightens a declared flag (one a shared declaration made, e.g. an operator's common flags):
   * bounds intersect the ones it has, a check runs after the one it has. The default must still
   * pass. Throws ArgumentError for an undeclared key, bounds on a non-numeric flag, or a check on
   * a non-string flag (programming errors).
   */
  restrict(key: keyof T & string, rule: FlagRule): ArgParser<T> {
    const spec = this.specs.get(key);
    if (spec === undefined) throw new ArgumentError(`restrict -${key}`, 'flag is not declared', key);
    this.specs.set(key, checkedRule(tightened(spec, rule)));
    return this;
  }

  /** The declared flags, in declaration order. */
  flags(): FlagSpec[] {
    return [...this.specs.values()];
  }

  /**
   * Parses the arguments after the program name (`process.argv.slice(2)`). When a help token is
   * present the result has `helpRequested` set (the other tokens are still checked).
   */
  parse(argv: readonly string[]): ParsedArgs<T> {
    const values: Values = {};
    for (const spec of this.specs.values()) values[spec.key] = spec.defaultValue;
    const given = new Set<string>();
    let helpRequested = false;
    for (const token of argv) {
      if (HELP_TOKENS.has(token) || token.startsWith('-?=')) {
        helpRequested = true;
        continue;
      }
      if (!token.startsWith('-')) {
        throw new ArgParseError(token, `unexpected argument ${JSON.stringify(token)}: flags are written -key=value (-? lists them)`);
      }
      const eq = token.indexOf('=');
      const key = token.slice(1, eq < 0 ? undefined : eq);
      const flag = `-${key}`;
      const spec = this.specs.get(key);
      if (spec === undefined) throw new ArgParseError(flag, `unknown flag ${flag} (${this.validList()})`);
      if (eq < 0) {
        throw new ArgParseError(flag, `${flag} needs a value: write ${flag}=<${typeName(spec)}> (default ${showValue(spec.defaultValue)})`);
      }
      values[key] = convert(spec, token.slice(eq + 1), token);
      given.add(key);
    }
    return new ParsedArgs<T>(this, values, given, helpRequested);
  }

  /**
   * The help text: program and description, a usage line, and a table of every flag with its
   * type, default and description, ending with the help flag itself.
   */
  help(): string {
    const rows = this.flags().map((spec) => [`-${spec.key}`, typeName(spec), showValue(spec.defaultValue), spec.description]);
    rows.push(['-?', '', '', 'print this help and exit (also -h, --help)']);
    const head = this.description === '' ? this.program : `${this.program}: ${this.description}`;
    return [head, `usage: ${this.program} [-key=value ...]`, '', formatTable(['flag', 'type', 'default', 'description'], rows)].join('\n');
  }

  /** @internal the spec of a declared key (used by ParsedArgs' typed getters). */
  spec(key: string): FlagSpec | undefined {
    return this.specs.get(key);
  }

  private declare<U extends object>(spec: FlagSpec): ArgParser<U> {
    if (!KEY_PATTERN.test(spec.key)) {
      throw new ArgumentError(`${spec.kind} -${spec.key}`, 'flag keys must be identifiers ([A-Za-z_][A-Za-z0-9_]*)', spec.key);
    }
    if (this.specs.has(spec.key)) throw new ArgumentError(`${spec.kind} -${spec.key}`, 'flag is already declared', spec.key);
    if (typeof spec.description !== 'string') {
      throw new ArgumentError(`${spec.kind} -${spec.key}`, 'description must be a string', spec.description);
    }
    this.specs.set(spec.key, checkedRule(spec));
    return this as unknown as ArgParser<U>;
  }

  private validList(): string {
    const keys = [...this.specs.keys()].map((k) => `-${k}`);
    return `valid: ${[...keys, '-?'].join(', ')}`;
  }
}

/**
 * The values of one parsed command line: every declared flag has a value (its default unless
 * given). `get` is typed by the parser's declarations; the getInt/getFloat/getString/getBool
 * getters check the declared kind at run time (ArgumentError for an undeclared key or a kind
 * mismatch, since both are programming errors).
 */
export class ParsedArgs<T extends object> {
  readonly program: string;
  /** True when `-?`, bare `-h` or `--help` was on the command line. */
  readonly helpRequested: boolean;
  private readonly parser: ArgParser<T>;
  private readonly values: Values;
  private readonly givenKeys: ReadonlySet<string>;

  constructor(parser: ArgParser<T>, values: Values, given: ReadonlySet<string>, helpRequested: boolean) {
    this.parser = parser;
    this.program = parser.program;
    this.values = values;
    this.givenKeys = given;
    this.helpRequested = helpRequested;
  }

  /** The value of a declared flag, typed by its declaration. */
  get<K extends keyof T & string>(key: K): T[K] {
    this.specOf(key, ['int', 'float', 'string', 'bool', 'choice']);
    return this.values[key] as T[K];
  }

  /** The value of an `int` flag. */
  getInt(key: string): number {
    this.specOf(key, ['int']);
    return this.values[key] as number;
  }

  /** The value of an `int` or `float` flag. */
  getFloat(key: string): number {
    this.specOf(key, ['int', 'float']);
    return this.values[key] as number;
  }

  /** The value of a `string` or `choice` flag. */
  getString(key: string): string {
    this.specOf(key, ['string', 'choice']);
    return this.values[key] as string;
  }

  /** The value of a `bool` flag. */
  getBool(key: string): boolean {
    this.specOf(key, ['bool']);
    return this.values[key] as boolean;
  }

  /** Whether the flag was written on the command line (rather than defaulted). */
  given(key: keyof T & string): boolean {
    this.specOf(key, ['int', 'float', 'string', 'bool', 'choice']);
    return this.givenKeys.has(key);
  }

  /** All values as a plain object (a copy). */
  toObject(): T {
    return { ...this.values } as T;
  }

  /** The parser's help text. */
  help(): string {
    return this.parser.help();
  }

  private specOf(key: string, kinds: readonly FlagKind[]): FlagSpec {
    const spec = this.parser.spec(key);
    if (spec === undefined) throw new ArgumentError(`-${key}`, `is not a declared flag of ${this.program}`);
    if (!kinds.includes(spec.kind)) throw new ArgumentError(`-${key}`, `is a ${spec.kind} flag, read it as ${spec.kind}`, kinds);
    return spec;
  }
}

/**
 * Runs an example's `main` with its parsed arguments, CK style: a help request prints the help
 * to stdout and exits 0 without running main; a user error — an ArgParseError from parsing or
 * thrown by main while cross-checking flags, or any other typed `TilekitError` (a shape the
 * operator rejects, a compile error, a missing compiler or device) — prints `error: <message>` as
 * one line on stderr and exits 2 (see `runCommand`); otherwise the exit code is main's return
 * value (0 when it returns nothing). Other errors (bugs) propagate with their stack. Returns the
 * exit code it reported.
 */
export async function runCli<T extends object>(
  parser: ArgParser<T>,
  argv: readonly string[],
  main: (args: ParsedArgs<T>) => void | number | Promise<void | number>,
  io: Partial<CliIo> = {},
): Promise<number> {
  return runCommand((out) => {
    const args = parser.parse(argv);
    if (!args.helpRequested) return main(args);
    out.stdout(`${parser.help()}\n`);
    return 0;
  }, io);
}

function convert(spec: FlagSpec, text: string, token: string): FlagValue {
  switch (spec.kind) {
    case 'int': {
      const value = Number(text);
      if (!INT_PATTERN.test(text) || !Number.isSafeInteger(value)) throw new ArgParseError(`-${spec.key}`, `${token}: expected an integer`);
      return inBounds(spec, value, token);
    }
    case 'float': {
      const value = Number(text);
      if (text.trim() === '' || !Number.isFinite(value)) throw new ArgParseError(`-${spec.key}`, `${token}: expected a number`);
      return inBounds(spec, value, token);
    }
    case 'bool': {
      const lower = text.toLowerCase();
      if (lower === '1' || lower === 'true') return true;
      if (lower === '0' || lower === 'false') return false;
      throw new ArgParseError(`-${spec.key}`, `${token}: expected a boolean (1, 0, true or false)`);
    }
    case 'choice': {
      if (!spec.choices?.includes(text)) throw new ArgParseError(`-${spec.key}`, `${token}: expected one of ${spec.choices?.join(', ')}`);
      return text;
    }
    case 'string':
      return checkedText(spec, text, token);
  }
}

/** The rule a value outside a flag's bounds breaks, or undefined when it is inside. */
function boundsRule(spec: FlagRule, value: number): string | undefined {
  if (spec.min !== undefined && value < spec.min) return `must be at least ${spec.min}`;
  if (spec.max !== undefined && value > spec.max) return `must be at most ${spec.max}`;
  return undefined;
}

function inBounds(spec: FlagSpec, value: number, token: string): number {
  const rule = boundsRule(spec, value);
  if (rule !== undefined) throw new ArgParseError(`-${spec.key}`, `${token}: ${rule}`);
  return value;
}

/** Runs a string flag's check: an ArgParseError passes as is, an ArgumentError becomes one naming the flag. */
function checkedText(spec: FlagSpec, text: string, token: string): string {
  try {
    spec.check?.(text);
  } catch (error) {
    if (error instanceof ArgParseError || !(error instanceof ArgumentError)) throw error;
    throw new ArgParseError(`-${spec.key}`, `${token}: ${ruleOf(error, text)}`);
  }
  return text;
}

function definedBounds(bounds: { readonly min?: number | undefined; readonly max?: number | undefined }): NumberBounds {
  return { ...(bounds.min === undefined ? {} : { min: bounds.min }), ...(bounds.max === undefined ? {} : { max: bounds.max }) };
}

/** `spec` with `rule` added: bounds intersected, checks chained. */
function tightened(spec: FlagSpec, rule: FlagRule): FlagSpec {
  const min = rule.min === undefined || (spec.min !== undefined && spec.min >= rule.min) ? spec.min : rule.min;
  const max = rule.max === undefined || (spec.max !== undefined && spec.max <= rule.max) ? spec.max : rule.max;
  const [first, second] = [spec.check, rule.check];
  const check: TextCheck | undefined =
    first === undefined || second === undefined
      ? (first ?? second)
      : (text) => {
          first(text);
          second(text);
        };
  return { ...spec, ...definedBounds({ min, max }), ...(check === undefined ? {} : { check }) };
}

/** `spec` when its bounds and check fit its kind and its default; else ArgumentError (a programming error). */
function checkedRule(spec: FlagSpec): FlagSpec {
  const where = `${spec.kind} -${spec.key}`;
  const numeric = spec.kind === 'int' || spec.kind === 'float';
  const bounds = [spec.min, spec.max].filter((b) => b !== undefined);
  if (bounds.length > 0 && !numeric) throw new ArgumentError(where, 'only int and float flags take bounds', bounds);
  const valid = spec.kind === 'int' ? Number.isSafeInteger : Number.isFinite;
  if (!bounds.every((b) => valid(b)))
    throw new ArgumentError(where, `bounds must be ${spec.kind === 'int' ? 'safe integers' : 'finite'}`, bounds);
  if (spec.check !== undefined && spec.kind !== 'string') throw new ArgumentError(where, 'only string flags take a check');
  if (typeof spec.defaultValue === 'number' && boundsRule(spec, spec.defaultValue) !== undefined) {
    throw new ArgumentError(where, `default ${boundsRule(spec, spec.defaultValue)}`, spec.defaultValue);
  }
  if (spec.kind === 'string') defaultPassesCheck(spec, where);
  return spec;
}

function defaultPassesCheck(spec: FlagSpec, where: string): void {
  try {
    spec.check?.(spec.defaultValue as string);
  } catch (error) {
    if (!(error instanceof ArgumentError)) throw error;
    throw new ArgumentError(where, `default must pass the flag's check (${error.message})`, spec.defaultValue);
  }
}

function typeName(spec: FlagSpec): string {
  if (spec.kind === 'choice') return (spec.choices ?? []).join('|');
  if (spec.min !== undefined && spec.max !== undefined) return `${spec.kind} ${spec.min}..${spec.max}`;
  if (spec.min !== undefined) return `${spec.kind} ≥ ${spec.min}`;
  if (spec.max !== undefined) return `${spec.kind} ≤ ${spec.max}`;
  return spec.kind;
}

function showValue(value: FlagValue): string {
  if (value === '') return '""';
  return String(value);
}
