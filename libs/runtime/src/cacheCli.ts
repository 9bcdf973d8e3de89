import { ArgumentError, TilekitError } from '@tilekit/numeric';
import { kernelCacheUsage, pruneKernelCache, type CacheUsage, type PruneResult } from './cachePrune.ts';
import { CACHE_EVICTION_TARGET, cacheEnabled, cacheMaxBytes, defaultCacheDir, mebibytes } from './kernelCacheSettings.ts';

/** The usage text of `tilekit-cache` (printed by `--help`). */
export const CACHE_CLI_USAGE = `usage: tilekit-cache [info|prune] [options]

Inspects or prunes the on-disk cache of compiled kernels.

commands:
  info                    entries, bytes and the configured cap (default)
  prune                   remove stale temporaries, old and least-recently-used entries

options:
  --dir D                 cache root (default $TILEKIT_CACHE_DIR, else ~/.cache/tilekit/kernels)
  --max-mb N              prune: keep at most N MiB (default the cap: $TILEKIT_CACHE_MAX_MB, else 1024)
  --older-than-days N     prune: also remove whatever was not used for N days
  --dry-run               prune: report what would be removed, remove nothing
  -h, --help              this text

exit status: 0 done, 1 the cache could not be read or pruned, 2 bad arguments`;

/** A bad command line; `runCacheCli` prints its message as one line and exits with 2. */
export class CacheCliUsageError extends TilekitError {
  constructor(problem: string) {
    super('runtime/cache-cli-usage', problem);
  }
}

/** A parsed `tilekit-cache` command line. */
export interface CacheCliArgs {
  readonly command: 'info' | 'prune' | 'help';
  readonly dir?: string;
  readonly maxMb?: number;
  readonly olderThanDays?: number;
  readonly dryRun: boolean;
}

/** Where `runCacheCli` writes and what it reads; each defaults to the process's own. */
export interface CacheCliIo {
  readonly stdout?: (text: string) => void;
  readonly stderr?: (text: string) => void;
  readonly env?: NodeJS.ProcessEnv;
  /** The clock, ms since the epoch. */
  readonly now?: number;
}

const COMMANDS = ['info', 'prune'] as const;
const VALUE_FLAGS = ['--dir', '--max-mb', '--older-than-days'] as const;
const PRUNE_ONLY = ['--max-mb', '--older-than-days', '--dry-run'] as const;
type ValueFlag = (typeof VALUE_FLAGS)[number];

function isValueFlag(flag: string): flag is ValueFlag {
  return (VALUE_FLAGS as readonly string[]).includes(flag);
}

function nonNegative(flag: string, text: string): number {
  const value = text.trim() === '' ? NaN : Number(text);
  if (!Number.isFinite(value) || value < 0) throw new CacheCliUsageError(`${flag} must be a number >= 0 (got ${JSON.stringify(text)})`);
  return value;
}

// Splits `--flag=value` and takes a separate value from the following argument.
function takeValue(flag: ValueFlag, inline: string | undefined, rest: string[]): string {
  const value = inline ?? rest.shift();
  if (value === undefined || (inline === undefined && value.startsWith('--'))) throw new CacheCliUsageError(`${flag} needs a value`);
  return value;
}

interface Draft {
  command?: string;
  values: Map<string, string>;
  dryRun: boolean;
}

function readToken(token: string, rest: string[], draft: Draft): void {
  if (token === '--dry-run') draft.dryRun = true;
  else if (token.startsWith('-')) {
    const [flag = token, inline] = token.includes('=')
      ? [token.slice(0, token.indexOf('=')), token.slice(token.indexOf('=') + 1)]
      : [token];
    if (flag === '--dry-run' || flag === '--help') throw new CacheCliUsageError(`${flag} takes no value`);
    if (!isValueFlag(flag)) throw new CacheCliUsageError(`unknown option ${flag} (see --help)`);
    if (draft.values.has(flag)) throw new CacheCliUsageError(`${flag} given twice`);
    draft.values.set(flag, takeValue(flag, inline, rest));
  } else if (draft.command === undefined) draft.command = token;
  else throw new CacheCliUsageError(`unexpected argument ${JSON.stringify(token)} (one command: info or prune)`);
}

function checkCommand(draft: Draft): 'info' | 'prune' {
  const command = draft.command ?? 'info';
  if (!(COMMANDS as readonly string[]).includes(command)) {
    throw new CacheCliUsageError(`unknown command ${JSON.stringify(command)} (expected info or prune)`);
  }
  const misplaced = PRUNE_ONLY.find((flag) => (flag === '--dry-run' ? draft.dryRun : draft.values.has(flag)));
  if (command !== 'prune' && misplaced) throw new CacheCliUsageError(`${misplaced} applies to prune only`);
  return command as 'info' | 'prune';
}

/**
 * Parses `tilekit-cache` arguments. Postcondition (tested): a bad command, an unknown or repeated
 * option, a missing or negative number, or a prune option given to info throws
 * `CacheCliUsageError` with a one-line message; `--help` anywhere gives command `help`.
 */
export function parseCacheCliArgs(argv: readonly string[]): CacheCliArgs {
  if (argv.some((token) => token === '-h' || token === '--help')) return { command: 'help', dryRun: false };
  const rest = [...argv];
  const draft: Draft = { values: new Map(), dryRun: false };
  for (let token = rest.shift(); token !== undefined; token = rest.shift()) readToken(token, rest, draft);
  const command = checkCommand(draft);
  const dir = draft.values.get('--dir');
  if (dir === '') throw new CacheCliUsageError('--dir must not be empty');
  const maxMb = draft.values.get('--max-mb');
  const days = draft.values.get('--older-than-days');
  return {
    command,
    dryRun: draft.dryRun,
    ...(dir !== undefined ? { dir } : {}),
    ...(maxMb !== undefined ? { maxMb: nonNegative('--max-mb', maxMb) } : {}),
    ...(days !== undefined ? { olderThanDays: nonNegative('--older-than-days', days) } : {}),
  };
}

/** `1536` → `1.5 KiB`: binary units, one decimal above bytes. */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${units[unit]}`;
}

function formatDay(ms: number | undefined, now: number): string {
  if (ms === undefined) return '-';
  const days = Math.max(0, Math.floor((now - ms) / 86_400_000));
  return `${new Date(ms).toISOString().slice(0, 10)} (${days} day${days === 1 ? '' : 's'} ago)`;
}

function usageLine(label: string, usage: CacheUsage): string {
  const items = usage.entries + usage.failed + usage.temporary;
  const kinds = `${usage.entries} entries, ${usage.failed} failed, ${usage.temporary} temporary`;
  return `  ${label.padEnd(8)}${String(items).padStart(6)} items  ${formatBytes(usage.bytes).padStart(10)}  (${kinds})`;
}

function capText(maxBytes: number): string {
  if (maxBytes === Infinity) return 'no size cap (TILEKIT_CACHE_MAX_MB=0)';
  return `cap ${formatBytes(maxBytes)}, trimmed to ${Math.round(CACHE_EVICTION_TARGET * 100)}% by LRU after a store`;
}

function infoLines(dir: string, usage: CacheUsage, env: NodeJS.ProcessEnv, now: number): string[] {
  const maxBytes = cacheMaxBytes(env);
  const share = maxBytes === Infinity ? '' : ` (${((100 * usage.bytes) / maxBytes).toFixed(1)}% of the cap)`;
  return [
    `tilekit kernel cache: ${dir}`,
    `  caching ${cacheEnabled(env) ? 'on' : 'off (TILEKIT_CACHE)'}; ${capText(maxBytes)}`,
    usageLine('holds', usage) + share,
    `  last use: oldest ${formatDay(usage.oldestUseMs, now)}, newest ${formatDay(usage.newestUseMs, now)}`,
  ];
}

function pruneLines(result: PruneResult): string[] {
  const removed = result.removed.reduce((sum, item) => sum + item.bytes, 0);
  const verb = result.dryRun ? 'would remove' : 'removed';
  return [
    `tilekit kernel cache: ${result.dir}${result.dryRun ? ' (dry run: nothing removed)' : ''}`,
    usageLine('before', result.before),
    `  ${verb} ${result.removed.length} items, ${formatBytes(removed)}`,
    usageLine('after', result.after),
  ];
}

async function execute(args: CacheCliArgs, env: NodeJS.ProcessEnv, now: number): Promise<string[]> {
  if (args.command === 'help') return [CACHE_CLI_USAGE];
  const dir = args.dir ?? defaultCacheDir(env);
  if (args.command === 'info') return infoLines(dir, await kernelCacheUsage(dir), env, now);
  const maxBytes = args.maxMb !== undefined ? mebibytes(args.maxMb) : cacheMaxBytes(env);
  const options = { dir, maxBytes, dryRun: args.dryRun, now };
  const result = await pruneKernelCache(args.olderThanDays !== undefined ? { ...options, olderThanDays: args.olderThanDays } : options);
  return pruneLines(result);
}

function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n', 1)[0] ?? message;
}

/**
 * Runs `tilekit-cache` with `argv` (without node and the script) and returns the exit status: 0
 * after printing the summary (or usage), 2 after one `tilekit-cache: <problem>` line on stderr for
 * bad arguments or environment variables, 1 after one such line when the cache cannot be read or
 * pruned. Never throws.
 */
export async function runCacheCli(argv: readonly string[], io: CacheCliIo = {}): Promise<number> {
  const stdout = io.stdout ?? ((text: string) => process.stdout.write(text));
  const stderr = io.stderr ?? ((text: string) => process.stderr.write(text));
  try {
    const lines = await execute(parseCacheCliArgs(argv), io.env ?? process.env, io.now ?? Date.now());
    stdout(`${lines.join('\n')}\n`);
    return 0;
  } catch (error) {
    stderr(`tilekit-cache: ${firstLine(error)}\n`);
    return error instanceof CacheCliUsageError || error instanceof ArgumentError ? 2 : 1;
  }
}
