import { ArgumentError } from '@tilekit/numeric';
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

/** One declared flag, as listed by `ArgParser.flags()` and the help text. */
export interface FlagSpec {
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
 * Postconditions (tested): every declared flag parses back from `-key=<its default>` to its
 * default; a later occurrence of a flag overrides an earlier one (as in CK); every malformed
 * command line raises ArgParseError with a one-line message naming the flag; the help lists
 * every flag with its default and description. Declaring a flag twice, a key that is not an
 * identifier, or a default of the wrong kind raises ArgumentError (a programming error).
 */
export class ArgParser<T extends object = Empty> {
  readonly program: string;
  readonly description: string;
  private readonly specs = new Map<string, FlagSpec>();

  constructor(program: string, description = '') {
    this.program = program;
    this.description = description;
  }

  /** An integer flag (safe integers, optional sign, decimal). */
  int<K extends string>(key: K, defaultValue: number, description: string): ArgParser<With<T, K, number>> {
    if (!Number.isSafeInteger(defaultValue)) throw new ArgumentError(`int -${key}`, 'default must be a safe integer', defaultValue);
    return this.declare({ key, kind: 'int', defaultValue, description });
  }

  /** A finite floating-point flag (anything JS's Number() reads as finite, e.g. `1e-3`). */
  float<K extends string>(key: K, defaultValue: number, description: string): ArgParser<With<T, K, number>> {
    if (!Number.isFinite(defaultValue)) throw new ArgumentError(`float -${key}`, 'default must be finite', defaultValue);
    return this.declare({ key, kind: 'float', defaultValue, description });
  }

  /** A free-form string flag (the empty string is allowed: `-kname=`). */
  string<K extends string>(key: K, defaultValue: string, description: string): ArgParser<With<T, K, string>> {
    if (typeof defaultValue !== 'string') throw new ArgumentError(`string -${key}`, 'default must be a string', defaultValue);
    return this.declare({ key, kind: 'string', defaultValue, description });
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
    this.specs.set(spec.key, spec);
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

/** Where runCli writes and how it ends; defaults: process.stdout, process.stderr, process.exitCode. */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  exit(code: number): void;
}

const processIo: CliIo = {
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
  // exitCode, not exit(): lets buffered output to a pipe drain before the process ends.
  exit: (code) => void (process.exitCode = code),
};

/**
 * Runs an example's `main` with its parsed arguments, CK style: a help request prints the help
 * to stdout and exits 0 without running main; an ArgParseError (from parsing, or thrown by main
 * while cross-checking flags) prints its one-line message to stderr and exits 2; otherwise the
 * exit code is main's return value (0 when it returns nothing). Other errors propagate.
 * Returns the exit code it reported.
 */
export async function runCli<T extends object>(
  parser: ArgParser<T>,
  argv: readonly string[],
  main: (args: ParsedArgs<T>) => void | number | Promise<void | number>,
  io: Partial<CliIo> = {},
): Promise<number> {
  const out: CliIo = { ...processIo, ...io };
  let code: number;
  try {
    const args = parser.parse(argv);
    if (args.helpRequested) {
      out.stdout(`${parser.help()}\n`);
      code = 0;
    } else {
      code = (await main(args)) ?? 0;
    }
  } catch (error) {
    if (!(error instanceof ArgParseError)) throw error;
    out.stderr(`${error.message}\n`);
    code = 2;
  }
  out.exit(code);
  return code;
}

function convert(spec: FlagSpec, text: string, token: string): FlagValue {
  switch (spec.kind) {
    case 'int': {
      const value = Number(text);
      if (!INT_PATTERN.test(text) || !Number.isSafeInteger(value)) throw new ArgParseError(`-${spec.key}`, `${token}: expected an integer`);
      return value;
    }
    case 'float': {
      const value = Number(text);
      if (text.trim() === '' || !Number.isFinite(value)) throw new ArgParseError(`-${spec.key}`, `${token}: expected a number`);
      return value;
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
      return text;
  }
}

function typeName(spec: FlagSpec): string {
  return spec.kind === 'choice' ? (spec.choices ?? []).join('|') : spec.kind;
}

function showValue(value: FlagValue): string {
  if (value === '') return '""';
  return String(value);
}
