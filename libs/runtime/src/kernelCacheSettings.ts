import { homedir } from 'node:os';
import { join } from 'node:path';
import { ArgumentError } from '@tilekit/numeric';

/** The size cap when `$TILEKIT_CACHE_MAX_MB` is unset: 1 GiB. */
export const DEFAULT_CACHE_MAX_MB = 1024;

/** After a store overflows the cap, eviction goes down to this fraction of it (hysteresis). */
export const CACHE_EVICTION_TARGET = 0.9;

const MIB = 1024 * 1024;
const OFF_VALUES: readonly string[] = ['off', '0', 'false', 'no'];
const ON_VALUES: readonly string[] = ['', 'on', '1', 'true', 'yes'];

/** How the kernel cache is configured by the environment. */
export interface KernelCacheSettings {
  /** The cache root. */
  readonly dir: string;
  /** False when `$TILEKIT_CACHE` says off: compiles run in temporary directories. */
  readonly enabled: boolean;
  /** The size cap in bytes; `Infinity` when `$TILEKIT_CACHE_MAX_MB` is 0 (no cap). */
  readonly maxBytes: number;
}

/** `$TILEKIT_CACHE_DIR` when set and non-empty, else `~/.cache/tilekit/kernels`. */
export function defaultCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const dir = env['TILEKIT_CACHE_DIR'];
  return dir ? dir : join(homedir(), '.cache', 'tilekit', 'kernels');
}

/**
 * Whether caching is on: `$TILEKIT_CACHE` unset, empty, `on`, `1`, `true` or `yes` (any case) turn
 * it on; `off`, `0`, `false` or `no` turn it off. Anything else is an `ArgumentError` naming the
 * variable, so a typo does not silently keep (or drop) the cache.
 */
export function cacheEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  const raw = env['TILEKIT_CACHE'];
  if (raw === undefined) return true;
  const value = raw.trim().toLowerCase();
  if (OFF_VALUES.includes(value)) return false;
  if (ON_VALUES.includes(value)) return true;
  throw new ArgumentError('TILEKIT_CACHE', 'must be on or off (also 1/0, true/false, yes/no)', raw);
}

/**
 * The size cap in bytes from `$TILEKIT_CACHE_MAX_MB` (MiB, fractions allowed; default
 * `DEFAULT_CACHE_MAX_MB`; `0` means no cap and gives `Infinity`). A negative or non-numeric value
 * is an `ArgumentError` naming the variable.
 */
export function cacheMaxBytes(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env['TILEKIT_CACHE_MAX_MB'];
  if (raw === undefined || raw.trim() === '') return mebibytes(DEFAULT_CACHE_MAX_MB);
  const mib = Number(raw);
  if (!Number.isFinite(mib) || mib < 0) {
    throw new ArgumentError('TILEKIT_CACHE_MAX_MB', 'must be a non-negative number of MiB (0: no cap)', raw);
  }
  return mib === 0 ? Infinity : mebibytes(mib);
}

/** All three settings read from `env`; throws the errors of `cacheEnabled` and `cacheMaxBytes`. */
export function kernelCacheSettings(env: NodeJS.ProcessEnv = process.env): KernelCacheSettings {
  return { dir: defaultCacheDir(env), enabled: cacheEnabled(env), maxBytes: cacheMaxBytes(env) };
}

/** Bytes in `mib` MiB, rounded down. */
export function mebibytes(mib: number): number {
  return Math.floor(mib * MIB);
}
