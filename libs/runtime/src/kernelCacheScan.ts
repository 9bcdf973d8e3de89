import { randomBytes } from 'node:crypto';
import { readdir, rename, rm, stat, utimes } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/**
 * What a directory in the kernel cache is: a published `entry` (`<xx>/<key>/`), a kept `failed`
 * compile (`failed/<key>/`), or `temporary` debris (a compile's staging directory, a corrupt entry
 * moved aside, or an eviction that a crashed process left half-done).
 */
export type CacheItemKind = 'entry' | 'failed' | 'temporary';

/** One directory of the cache with its size and last use. */
export interface CacheItem {
  readonly kind: CacheItemKind;
  /** The key for entries and failures, the directory name for temporaries. */
  readonly name: string;
  readonly path: string;
  /** Sum of the apparent sizes of the files inside. */
  readonly bytes: number;
  /** The directory's mtime (ms): set at publish and on every cache hit, so it orders by last use. */
  readonly lastUsedMs: number;
}

const KEY = /^[0-9a-f]{64}$/;
const SHARD = /^[0-9a-f]{2}$/;
const FAILED_DIR = 'failed';
const EVICTING = '.evict-';
// Names this cache creates for work in progress (see KernelCache.stage and .publish).
const TEMPORARY = [/^\.staging-[0-9a-f]{12}-/, /^[0-9a-f]{64}\.corrupt-/, /^\.evict-/];

function isCode(error: unknown, ...codes: string[]): boolean {
  return typeof error === 'object' && error !== null && codes.includes((error as { code?: string }).code ?? '');
}

/** Directory names under `dir`, or none when it does not exist (or vanished meanwhile). */
async function subdirectories(dir: string): Promise<string[]> {
  try {
    const children = await readdir(dir, { withFileTypes: true });
    return children.filter((child) => child.isDirectory()).map((child) => child.name);
  } catch (error) {
    if (isCode(error, 'ENOENT', 'ENOTDIR')) return [];
    throw error;
  }
}

// Only names this cache writes are ever classified, so a cache root pointed at the wrong
// directory leaves unrelated files alone.
function classify(shard: string, name: string): CacheItemKind | undefined {
  if (shard === FAILED_DIR) return KEY.test(name) ? 'failed' : name.startsWith(EVICTING) ? 'temporary' : undefined;
  if (KEY.test(name)) return name.startsWith(shard) ? 'entry' : undefined;
  return TEMPORARY.some((pattern) => pattern.test(name)) ? 'temporary' : undefined;
}

/** Total apparent size of the files under `dir` (recursive). Throws ENOENT when it vanishes. */
export async function directoryBytes(dir: string): Promise<number> {
  const sizes = (await readdir(dir, { withFileTypes: true })).map(async (child) => {
    const path = join(dir, child.name);
    if (child.isDirectory()) return directoryBytes(path);
    return child.isFile() ? (await stat(path)).size : 0;
  });
  return (await Promise.all(sizes)).reduce((sum, size) => sum + size, 0);
}

/** The item at `path`, or undefined when another process removed it while we looked. */
async function readItem(kind: CacheItemKind, name: string, path: string): Promise<CacheItem | undefined> {
  try {
    const { mtimeMs } = await stat(path);
    return { kind, name, path, bytes: await directoryBytes(path), lastUsedMs: mtimeMs };
  } catch (error) {
    if (isCode(error, 'ENOENT', 'ENOTDIR')) return undefined;
    throw error;
  }
}

async function scanGroup(root: string, group: string): Promise<(CacheItem | undefined)[]> {
  const names = await subdirectories(join(root, group));
  return Promise.all(
    names.map((name) => {
      const kind = classify(group, name);
      return kind === undefined ? undefined : readItem(kind, name, join(root, group, name));
    }),
  );
}

/**
 * Every item of the cache rooted at `root` (none when it does not exist), in directory order.
 * Items that vanish while scanning (a concurrent eviction) are left out; directories the cache
 * did not name are ignored. The file system calls run concurrently (thousands of entries).
 */
export async function scanKernelCache(root: string): Promise<CacheItem[]> {
  const groups = (await subdirectories(root)).filter((name) => SHARD.test(name) || name === FAILED_DIR).sort();
  const scanned = await Promise.all(groups.map((group) => scanGroup(root, group)));
  return scanned.flat().filter((item): item is CacheItem => item !== undefined);
}

/**
 * Removes an item. Entries and failures are first renamed aside (atomic), so a concurrent reader
 * sees the whole entry or nothing — a miss, never a half-deleted entry. Returns false when another
 * process removed it first.
 */
export async function removeCacheItem(item: CacheItem): Promise<boolean> {
  let doomed = item.path;
  if (item.kind !== 'temporary') {
    doomed = join(dirname(item.path), `${EVICTING}${basename(item.path)}-${process.pid}-${randomBytes(4).toString('hex')}`);
    try {
      await rename(item.path, doomed);
    } catch (error) {
      if (isCode(error, 'ENOENT')) return false;
      throw error;
    }
  }
  try {
    await rm(doomed, { recursive: true, force: true });
    return true;
  } catch (error) {
    if (isCode(error, 'ENOENT', 'ENOTEMPTY')) return false; // another pruner is removing it
    throw error;
  }
}

/**
 * Records a use of the entry at `dir` (its mtime becomes `nowMs`). Best effort: an entry evicted
 * meanwhile or a read-only cache just keeps its old time.
 */
export async function touchCacheEntry(dir: string, nowMs: number): Promise<void> {
  const seconds = nowMs / 1000;
  await utimes(dir, seconds, seconds).catch(() => undefined);
}
