// The command line of the tools that regenerate a committed file (README blocks, tables): print it,
// `--write` it, or `--check` it (exit 1 when it differs), `--readme FILE` and one more path option.
import { parseArgs } from 'node:util';
import { ArgParseError } from '@tilekit/host';

/** What the command line asks: the mode, `--readme` and the tool's other path option (both undefined when absent). */
export interface GeneratedFileArgs {
  readonly mode: 'print' | 'write' | 'check' | 'help';
  readonly readme: string | undefined;
  readonly path: string | undefined;
}

/**
 * Parses `argv` with `--write`, `--check`, `--readme FILE`, `--<pathOption> FILE` and `--help`.
 * Throws ArgParseError naming `--check` when both modes are given, and parseArgs' error for an
 * unknown option (both one line and exit 2 under `runCommand`).
 */
export function parseGeneratedFileArgs(argv: readonly string[], pathOption: string, usage: string): GeneratedFileArgs {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      write: { type: 'boolean' },
      check: { type: 'boolean' },
      readme: { type: 'string' },
      [pathOption]: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values['write'] === true && values['check'] === true)
    throw new ArgParseError('--check', `give --write or --check, not both (${usage})`);
  const mode = values['help'] === true ? 'help' : values['write'] === true ? 'write' : values['check'] === true ? 'check' : 'print';
  const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
  return { mode, readme: text(values['readme']), path: text(values[pathOption]) };
}
