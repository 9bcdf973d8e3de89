import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ArgumentError, TilekitError } from '@tilekit/numeric';
import { enforceCacheCap } from './cachePrune.ts';
import { cacheEnabled, cacheMaxBytes, defaultCacheDir } from './kernelCacheSettings.ts';
import { directoryBytes, touchCacheEntry } from './kernelCacheScan.ts';
import type { KernelResources } from './ptxasInfo.ts';

export { defaultCacheDir } from './kernelCacheSettings.ts';

/** Bumped whenever the entry layout or what the key covers changes. */
export const CACHE_FORMAT = 1;

/** Everything that changes the compiled binary. */
export interface CacheKeyParts {
  readonly compiler: string;
  /** The compiler's own version string (`nvcc --version`, NVRTC major.minor). */
  readonly compilerVersion: string;
  readonly arch: string;
  /** Every option passed to the compiler besides the arch, in order. */
  readonly flags: readonly string[];
  readonly source: string;
}

/**
 * sha256 (hex) of a canonical encoding of the parts. Postcondition (property-tested): equal parts
 * give equal keys, and changing any one part changes the key.
 */
export function cacheKey(parts: CacheKeyParts): string {
  const canonical = JSON.stringify([CACHE_FORMAT, parts.compiler, parts.compilerVersion, parts.arch, [...parts.flags], parts.source]);
  return createHash('sha256').update(canonical).digest('hex');
}

/** meta.json of an entry. */
export interface CacheEntryMeta {
  readonly format: number;
  readonly key: string;
  readonly compiler: string;
  readonly compilerVersion: string;
  readonly arch: string;
  readonly flags: readonly string[];
  /** Entry name given by the compile that created the entry. */
  readonly name: string;
  /** Resources of every entry function in the binary. */
  readonly functions: Readonly<Record<string, KernelResources>>;
  readonly resourcesReported: boolean;
  readonly cubinSha256: string;
  readonly cubinBytes: number;
  readonly hasPtx: boolean;
  readonly createdAt: string;
}

/** A complete, verified cache entry. */
export interface CacheEntry {
  readonly key: string;
  readonly dir: string;
  readonly sourcePath: string;
  readonly binaryPath: string;
  readonly ptxPath?: string;
  readonly logPath: string;
  readonly meta: CacheEntryMeta;
  readonly cubin: Uint8Array;
  readonly ptx?: string;
  readonly log: string;
}

/** File names inside an entry directory. */
export const ENTRY_FILES = {
  source: 'kernel.cu',
  binary: 'kernel.cubin',
  ptx: 'kernel.ptx',
  log: 'compile.log',
  meta: 'meta.json',
} as const;

export function sha256(bytes: Uint8Array | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

function isCode(error: unknown, ...codes: string[]): boolean {
  return typeof error === 'object' && error !== null && codes.includes((error as { code?: string }).code ?? '');
}

/** The cache could not publish an entry (an incomplete staging directory, or endless races). */
export class CachePublishError extends TilekitError {
  readonly key: string;

  constructor(key: string, reason: string) {
    super('runtime/cache-publish', `tilekit kernel cache: could not publish ${key}: ${reason}`);
    this.key = key;
  }
}

/** How a `KernelCache` behaves; each option left out is read from the environment. */
export interface KernelCacheOptions {
  /** false: every lookup misses and entries are built in temporary directories (default: `$TILEKIT_CACHE`). */
  readonly enabled?: boolean;
  /** Size cap in bytes, `Infinity` for none (default: `$TILEKIT_CACHE_MAX_MB`, else 1024 MiB). */
  readonly maxBytes?: number;
  /** The clock (ms since the epoch) that stamps last uses (default `Date.now`). */
  readonly now?: () => number;
}

/** A process rescans the whole cache for the cap at least once per this many of its stores. */
export const CAP_RESCAN_STORES = 64;

function checkMaxBytes(maxBytes: unknown): number {
  if (typeof maxBytes !== 'number' || Number.isNaN(maxBytes) || maxBytes < 0) {
    throw new ArgumentError('maxBytes', 'must be a number of bytes >= 0 (Infinity: no cap)', maxBytes);
  }
  return maxBytes;
}

/**
 * The on-disk kernel cache: `<root>/<key[0:2]>/<key>/` holding the source, the cubin, the log and
 * meta.json. Entries are built in a private staging directory beside their final place and
 * published with one `rename`, so readers see a whole entry or none; when two writers race for
 * one key the first rename wins and the loser discards its copy. A reader treats an entry whose
 * cubin does not match meta.json's checksum as a miss, and the next publish replaces it.
 *
 * Each hit and publish stamps the entry directory's mtime (its last use). After a publish, when
 * the cache exceeds `maxBytes`, least-recently-used items are evicted (renamed aside, then
 * deleted, so a concurrent reader misses rather than fails) until it is within
 * `CACHE_EVICTION_TARGET` of the cap; the entry just published is kept. A full scan stats every
 * file (seconds for thousands of entries on a slow disk), so between scans the size is tracked as
 * the last scan's total plus what this process stored, and the cache is rescanned when that passes
 * the cap or after `CAP_RESCAN_STORES` stores (to see what other processes added). With `enabled`
 * false nothing under `root` is read or written.
 */
export class KernelCache {
  readonly root: string;
  readonly enabled: boolean;
  readonly maxBytes: number;
  readonly #now: () => number;
  // Bytes under root as of the last scan plus this process's stores since; undefined before one.
  #usage: { bytes: number; stores: number } | undefined;

  constructor(root: string = defaultCacheDir(), options: KernelCacheOptions = {}) {
    if (typeof root !== 'string' || root === '') throw new ArgumentError('root', 'must be a non-empty path', root);
    this.root = root;
    this.enabled = options.enabled ?? cacheEnabled();
    this.maxBytes = checkMaxBytes(options.maxBytes ?? cacheMaxBytes());
    this.#now = options.now ?? Date.now;
  }

  entryDir(key: string): string {
    return join(this.root, key.slice(0, 2), key);
  }

  /** The verified entry for `key`, or undefined (missing, partial, corrupt, or caching off). */
  async lookup(key: string): Promise<CacheEntry | undefined> {
    if (!this.enabled) return undefined;
    const entry = await readEntry(this.entryDir(key), key);
    if (entry) await touchCacheEntry(entry.dir, this.#now());
    return entry;
  }

  /** A fresh private directory on the same filesystem as the entry (a temporary one when off). */
  async stage(key: string): Promise<string> {
    if (!this.enabled) return mkdtemp(join(tmpdir(), 'tilekit-compile-'));
    const parent = join(this.root, key.slice(0, 2));
    await mkdir(parent, { recursive: true });
    return mkdtemp(join(parent, `.staging-${key.slice(0, 12)}-`));
  }

  /**
   * Moves a complete staging directory into place. Returns the entry now published for `key`:
   * ours, or a concurrent writer's if it got there first. A corrupt existing entry is replaced.
   * Then applies the size cap. With caching off, returns the staged entry where it is.
   */
  async publish(key: string, staging: string): Promise<CacheEntry> {
    const staged = await readEntry(staging, key);
    if (!staged) throw new CachePublishError(key, `${staging} does not hold a complete entry`);
    if (!this.enabled) return staged;
    const dir = this.entryDir(key);
    for (let attempt = 0; attempt < 3; attempt += 1) {
      if (await renameDirectory(staging, dir)) return this.#stored(key, entryAt(dir, staged), true);
      const existing = await readEntry(dir, key);
      if (existing) {
        await rm(staging, { recursive: true, force: true });
        return this.#stored(key, existing, false);
      }
      await discardDirectory(dir); // corrupt or half-deleted
    }
    throw new CachePublishError(key, `three attempts under ${this.root} lost races`);
  }

  /**
   * Keeps a failed compile's staging directory (source and log) as `<root>/failed/<key>/`,
   * replacing an older failure of the same key. Returns the directory now holding it (the
   * staging directory itself when caching is off).
   */
  async keepFailure(key: string, staging: string): Promise<string> {
    if (!this.enabled) return staging;
    const failed = join(this.root, 'failed');
    await mkdir(failed, { recursive: true });
    const dir = join(failed, key);
    await rm(dir, { recursive: true, force: true });
    try {
      await rename(staging, dir);
      return dir;
    } catch {
      return staging; // a concurrent failure took the name; ours stays where it is
    }
  }

  // Stamps the entry's last use and applies the cap. Eviction is best effort: a store must not
  // fail because a concurrent pruner got to an item first or a directory is read-only.
  async #stored(key: string, entry: CacheEntry, added: boolean): Promise<CacheEntry> {
    const now = this.#now();
    await touchCacheEntry(entry.dir, now);
    if (this.maxBytes !== Infinity) await this.#applyCap(key, added ? entry.dir : undefined, now).catch(() => undefined);
    return entry;
  }

  async #applyCap(key: string, addedDir: string | undefined, now: number): Promise<void> {
    const usage = this.#usage;
    if (usage !== undefined) {
      usage.bytes += addedDir === undefined ? 0 : await directoryBytes(addedDir).catch(() => 0);
      usage.stores += 1;
      if (usage.stores < CAP_RESCAN_STORES && usage.bytes <= this.maxBytes) return;
    }
    this.#usage = undefined; // a failed scan below rescans next time
    const { bytes } = await enforceCacheCap(this.root, this.maxBytes, key, now);
    this.#usage = { bytes, stores: 0 };
  }
}

/** Renames `from` to `to`; false when `to` already exists (another writer's entry). */
async function renameDirectory(from: string, to: string): Promise<boolean> {
  try {
    await rename(from, to);
    return true;
  } catch (error) {
    if (isCode(error, 'ENOTEMPTY', 'EEXIST', 'EISDIR')) return false;
    throw error;
  }
}

/** Moves `dir` aside (atomic) and deletes it; a no-op when it is already gone. */
async function discardDirectory(dir: string): Promise<void> {
  const aside = `${dir}.corrupt-${process.pid}-${Date.now()}`;
  await rename(dir, aside).then(
    () => rm(aside, { recursive: true, force: true }),
    () => undefined,
  );
}

/** The paths of an entry whose files live in `dir`. */
function entryPaths(dir: string, hasPtx: boolean): Pick<CacheEntry, 'dir' | 'sourcePath' | 'binaryPath' | 'logPath' | 'ptxPath'> {
  const paths = {
    dir,
    sourcePath: join(dir, ENTRY_FILES.source),
    binaryPath: join(dir, ENTRY_FILES.binary),
    logPath: join(dir, ENTRY_FILES.log),
  };
  return hasPtx ? { ...paths, ptxPath: join(dir, ENTRY_FILES.ptx) } : paths;
}

/** `entry`, with its files moved to `dir`. */
function entryAt(dir: string, entry: CacheEntry): CacheEntry {
  return { ...entry, ...entryPaths(dir, entry.meta.hasPtx) };
}

async function readEntry(dir: string, key: string): Promise<CacheEntry | undefined> {
  let meta: CacheEntryMeta;
  try {
    meta = JSON.parse(await readFile(join(dir, ENTRY_FILES.meta), 'utf8')) as CacheEntryMeta;
  } catch {
    return undefined;
  }
  if (meta.format !== CACHE_FORMAT || meta.key !== key) return undefined;
  // Any file missing here (an eviction or a corrupt-entry replacement racing us) is a miss.
  try {
    const paths = entryPaths(dir, meta.hasPtx);
    const cubin = new Uint8Array(await readFile(paths.binaryPath));
    if (cubin.length !== meta.cubinBytes || sha256(cubin) !== meta.cubinSha256) return undefined;
    const log = await readFile(paths.logPath, 'utf8');
    await readFile(paths.sourcePath, { encoding: 'utf8', flag: 'r' });
    const base = { key, ...paths, meta, cubin, log };
    if (paths.ptxPath === undefined) return base;
    return { ...base, ptx: await readFile(paths.ptxPath, 'utf8') };
  } catch {
    return undefined;
  }
}
