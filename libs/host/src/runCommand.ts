import { TilekitError } from '@tilekit/numeric';

/** Where runCli / runCommand write and how they end; defaults: process.stdout, process.stderr, process.exitCode. */
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

/** The exit code of a command line the user got wrong (a flag, a value, a file, a missing compiler). */
export const USER_ERROR_EXIT_CODE = 2;

// node:util parseArgs' usage errors (unknown option, missing value, stray positional).
const NODE_USAGE_CODE = /^ERR_PARSE_ARGS_/;

/**
 * Whether `error` is the user's to fix rather than a bug in tilekit: every `TilekitError` (a typed
 * error names the argument and the rule it broke: bad flags, bad shapes, compile errors of the
 * chosen kernel, a missing NVRTC or device), and node:util `parseArgs` usage errors. Plain
 * `Error`, `TypeError`, `RangeError`… are bugs.
 */
export function isUserError(error: unknown): error is Error {
  if (error instanceof TilekitError) return true;
  const code = error instanceof Error ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' && NODE_USAGE_CODE.test(code);
}

/**
 * `error: <message>` as one line: the message's lines, trimmed, joined by `; ` (a compile error's
 * quoted source line and log tail stay readable), or the error's name when the message is empty.
 * Postcondition (tested): the result holds no line break and starts with `error: `.
 */
export function formatUserError(error: Error): string {
  const parts = error.message
    .split(/\r\n|\r|\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '');
  return `error: ${parts.length === 0 ? error.name : parts.join('; ')}`;
}

/**
 * Runs a command-line program's body with the CLI error contract: a user error (`isUserError`)
 * prints `formatUserError` on stderr (one line, no stack) and exits 2; anything else propagates,
 * so node prints its stack and exits 1 (a bug should be seen whole). Otherwise the exit code is
 * `main`'s return value (0 when it returns nothing). `main` receives the io in effect. Returns the
 * exit code it reported. Tools that do not parse with ArgParser (positional files, node:util
 * parseArgs) use it directly; `runCli` is built on it.
 */
export async function runCommand(main: (io: CliIo) => void | number | Promise<void | number>, io: Partial<CliIo> = {}): Promise<number> {
  const out: CliIo = { ...processIo, ...io };
  let code: number;
  try {
    code = (await main(out)) ?? 0;
  } catch (error) {
    if (!isUserError(error)) throw error;
    out.stderr(`${formatUserError(error)}\n`);
    code = USER_ERROR_EXIT_CODE;
  }
  out.exit(code);
  return code;
}
