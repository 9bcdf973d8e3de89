import { ArgumentError } from '@tilekit/numeric';
import { CACHE_EVICTION_TARGET, defaultCacheDir } from './kernelCacheSettings.ts';
import { removeCacheItem, scanKernelCache, type CacheItem } from './kernelCacheScan.ts';

/** A temporary directory younger than this may belong to a compile still running: never removed. */
export const TEMPORARY_GRACE_MS = 60 * 60 * 1000;

const DAY_MS = 24 * 60 * 60 * 1000;

/** Counts and sizes of a set of cache items. */
export interface CacheUsage {
  readonly entries: number;
  readonly failed: number;
  readonly temporary: number;
  readonly bytes: number;
  /** Least recent use among the items (ms since the epoch); undefined when there are none. */
  readonly oldestUseMs?: number;
  readonly newestUseMs?: number;
}

/** What selects items for removal; see `planEviction`. */
export interface EvictionRule {
  /** The clock (ms) that ages are measured against. */
  readonly nowMs: number;
  /** Remove least-recently-used items while the total exceeds `targetBytes` (default `maxBytes`)... */
  readonly maxBytes?: number;
  /** ...but only once it exceeds `maxBytes` (a cap with hysteresis). */
  readonly targetBytes?: number;
  /** Remove every item last used before this time (ms). */
  readonly usedBeforeMs?: number;
  /** An entry key never removed (the one just stored). */
  readonly protectKey?: string;
}

/** Sums a list of items by kind. */
export function cacheUsage(items: readonly CacheItem[]): CacheUsage {
  const count = (kind: CacheItem['kind']): number => items.filter((item) => item.kind === kind).length;
  const usage = {
    entries: count('entry'),
    failed: count('failed'),
    temporary: count('temporary'),
    bytes: items.reduce((sum, item) => sum + item.bytes, 0),
  };
  if (items.length === 0) return usage;
  const oldestUseMs = items.reduce((min, item) => Math.min(min, item.lastUsedMs), Infinity);
  const newestUseMs = items.reduce((max, item) => Math.max(max, item.lastUsedMs), -Infinity);
  return { ...usage, oldestUseMs, newestUseMs };
}

function removable(item: CacheItem, rule: EvictionRule): boolean {
  if (item.kind === 'entry' && item.name === rule.protectKey) return false;
  return item.kind !== 'temporary' || rule.nowMs - item.lastUsedMs >= TEMPORARY_GRACE_MS;
}

/**
 * The items to remove, in removal order (pure). Candidates are every item but the protected entry
 * and temporaries younger than `TEMPORARY_GRACE_MS`, taken least recently used first. Stale
 * temporaries and items used before `usedBeforeMs` always go; then, if the rest exceeds
 * `maxBytes`, further candidates go until it is at most `targetBytes`. Postconditions
 * (property-tested): the removed set is, apart from the always-removed, a prefix of the candidates
 * in LRU order; the kept total is at most the target unless every candidate was removed; and
 * keeping the last size-driven removal would leave the total above the target.
 */
export function planEviction(items: readonly CacheItem[], rule: EvictionRule): CacheItem[] {
  const candidates = items.filter((item) => removable(item, rule)).sort((a, b) => a.lastUsedMs - b.lastUsedMs);
  const expired = (item: CacheItem): boolean =>
    item.kind === 'temporary' || (rule.usedBeforeMs !== undefined && item.lastUsedMs < rule.usedBeforeMs);
  const removed = candidates.filter(expired);
  let total = items.reduce((sum, item) => sum + item.bytes, 0) - removed.reduce((sum, item) => sum + item.bytes, 0);
  if (rule.maxBytes === undefined || total <= rule.maxBytes) return removed;
  const target = rule.targetBytes ?? rule.maxBytes;
  for (const item of candidates) {
    if (total <= target) break;
    if (expired(item)) continue;
    removed.push(item);
    total -= item.bytes;
  }
  return removed;
}

/** Removes `items`, returning those this process actually removed (not a concurrent pruner). */
async function removeAll(items: readonly CacheItem[]): Promise<CacheItem[]> {
  const done: CacheItem[] = [];
  for (const item of items) if (await removeCacheItem(item)) done.push(item);
  return done;
}

/**
 * The size cap applied after a store: scans the cache under `root` and, when it exceeds
 * `maxBytes`, removes least-recently-used items (never `protectKey`) until it is at most
 * `CACHE_EVICTION_TARGET` of the cap. Returns what it removed and the bytes left.
 */
export async function enforceCacheCap(
  root: string,
  maxBytes: number,
  protectKey: string,
  nowMs: number,
): Promise<{ removed: CacheItem[]; bytes: number }> {
  const items = await scanKernelCache(root);
  const targetBytes = maxBytes * CACHE_EVICTION_TARGET;
  const removed = await removeAll(planEviction(items, { nowMs, maxBytes, targetBytes, protectKey }));
  return { removed, bytes: cacheUsage(items).bytes - cacheUsage(removed).bytes };
}

/** Options of `pruneKernelCache`. */
export interface PruneOptions {
  /** Cache root (default `$TILEKIT_CACHE_DIR` or `~/.cache/tilekit/kernels`). */
  readonly dir?: string;
  /** Remove least-recently-used items until the cache holds at most this many bytes. */
  readonly maxBytes?: number;
  /** Remove items not used for this many days. */
  readonly olderThanDays?: number;
  /** Report what would be removed, remove nothing (default false). */
  readonly dryRun?: boolean;
  /** The clock, ms since the epoch (default `Date.now()`). */
  readonly now?: number;
}

/** What `pruneKernelCache` found and did. */
export interface PruneResult {
  readonly dir: string;
  readonly dryRun: boolean;
  readonly before: CacheUsage;
  /** The items removed (with `dryRun`: the items that would have been). */
  readonly removed: readonly CacheItem[];
  readonly after: CacheUsage;
}

function checkPruneOptions(options: PruneOptions): Required<Pick<PruneOptions, 'dir' | 'dryRun' | 'now'>> {
  const { dir = defaultCacheDir(), dryRun = false, now = Date.now() } = options;
  if (typeof dir !== 'string' || dir === '') throw new ArgumentError('dir', 'must be a non-empty path', dir);
  const { maxBytes, olderThanDays } = options;
  if (maxBytes !== undefined && (typeof maxBytes !== 'number' || Number.isNaN(maxBytes) || maxBytes < 0)) {
    throw new ArgumentError('maxBytes', 'must be a number of bytes >= 0 (Infinity: no size limit)', maxBytes);
  }
  if (olderThanDays !== undefined && (typeof olderThanDays !== 'number' || !Number.isFinite(olderThanDays) || olderThanDays < 0)) {
    throw new ArgumentError('olderThanDays', 'must be a finite number of days >= 0', olderThanDays);
  }
  if (typeof dryRun !== 'boolean') throw new ArgumentError('dryRun', 'must be a boolean', dryRun);
  if (typeof now !== 'number' || !Number.isFinite(now)) throw new ArgumentError('now', 'must be a finite time in ms', now);
  return { dir, dryRun, now };
}

/**
 * Prunes the kernel cache: removes stale temporaries, items unused for `olderThanDays`, then
 * least-recently-used items until at most `maxBytes` remain (see `planEviction`). Safe while other
 * processes use the cache: an entry is renamed aside before deletion, so their lookups miss.
 * Postcondition (tested): with `dryRun` nothing on disk changes and `removed` lists what would go.
 */
export async function pruneKernelCache(options: PruneOptions = {}): Promise<PruneResult> {
  const { dir, dryRun, now } = checkPruneOptions(options);
  const items = await scanKernelCache(dir);
  const rule: EvictionRule = {
    nowMs: now,
    ...(options.maxBytes !== undefined ? { maxBytes: options.maxBytes } : {}),
    ...(options.olderThanDays !== undefined ? { usedBeforeMs: now - options.olderThanDays * DAY_MS } : {}),
  };
  const planned = planEviction(items, rule);
  const removed = dryRun ? planned : await removeAll(planned);
  const gone = new Set(removed);
  const after = cacheUsage(items.filter((item) => !gone.has(item)));
  return { dir, dryRun, before: cacheUsage(items), removed, after };
}

/** The usage of the cache under `dir` (default `$TILEKIT_CACHE_DIR` or `~/.cache/tilekit/kernels`). */
export async function kernelCacheUsage(dir: string = defaultCacheDir()): Promise<CacheUsage> {
  if (typeof dir !== 'string' || dir === '') throw new ArgumentError('dir', 'must be a non-empty path', dir);
  return cacheUsage(await scanKernelCache(dir));
}
