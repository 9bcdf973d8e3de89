// runCli with its streams captured: what a shell would see, for CLI specs.
import { runCli, type ArgParser, type ParsedArgs } from '../argParser.ts';

/** What a command line printed and its exit code. */
export interface CliCapture {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

const mustNotRun = (): never => {
  throw new Error('captureCli: main ran, but the command line should have been rejected first');
};

/**
 * Runs `runCli(parser, argv, main)` with stdout and stderr captured and the process's exit code
 * untouched. `main` defaults to one that fails the run (a plain Error, which runCli propagates):
 * for command lines that must be rejected before any work.
 */
export async function captureCli<T extends object>(
  parser: ArgParser<T>,
  argv: readonly string[],
  main: (args: ParsedArgs<T>) => void | number | Promise<void | number> = mustNotRun,
): Promise<CliCapture> {
  let stdout = '';
  let stderr = '';
  const io = { stdout: (t: string) => void (stdout += t), stderr: (t: string) => void (stderr += t), exit: () => undefined };
  const code = await runCli(parser, argv, main, io);
  return { code, stdout, stderr };
}
