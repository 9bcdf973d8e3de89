import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { ArgumentError } from '@tilekit/numeric';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cacheUsage, kernelCacheUsage, planEviction, pruneKernelCache, TEMPORARY_GRACE_MS, type EvictionRule } from './cachePrune.ts';
import { KernelCache } from './kernelCache.ts';
import type { CacheItem } from './kernelCacheScan.ts';
import { stageCacheEntry, testCacheKey } from './testing/kernelCacheEntries.ts';

const NOW = Date.UTC(2025, 5, 1);
const DAY = 86_400_000;

const itemArb: fc.Arbitrary<CacheItem> = fc
  .record({
    kind: fc.constantFrom<CacheItem['kind']>('entry', 'entry', 'entry', 'failed', 'temporary'),
    n: fc.integer({ min: 0, max: 30 }),
    bytes: fc.integer({ min: 0, max: 5000 }),
    age: fc.integer({ min: 0, max: 30 * DAY }),
  })
  .map(({ kind, n, bytes, age }) => ({ kind, name: testCacheKey(n), path: `/c/${kind}/${n}`, bytes, lastUsedMs: NOW - age }));

const ruleArb: fc.Arbitrary<EvictionRule> = fc
  .record({
    maxBytes: fc.option(fc.integer({ min: 0, max: 40_000 }), { nil: undefined }),
    targetShare: fc.double({ min: 0.5, max: 1, noNaN: true }),
    usedBeforeDays: fc.option(fc.integer({ min: 0, max: 40 }), { nil: undefined }),
    protect: fc.option(fc.integer({ min: 0, max: 30 }), { nil: undefined }),
  })
  .map(({ maxBytes, targetShare, usedBeforeDays, protect }) => ({
    nowMs: NOW,
    ...(maxBytes !== undefined ? { maxBytes, targetBytes: maxBytes * targetShare } : {}),
    ...(usedBeforeDays !== undefined ? { usedBeforeMs: NOW - usedBeforeDays * DAY } : {}),
    ...(protect !== undefined ? { protectKey: testCacheKey(protect) } : {}),
  }));

function isCandidate(item: CacheItem, rule: EvictionRule): boolean {
  if (item.kind === 'entry' && item.name === rule.protectKey) return false;
  return item.kind !== 'temporary' || NOW - item.lastUsedMs >= TEMPORARY_GRACE_MS;
}

function isExpired(item: CacheItem, rule: EvictionRule): boolean {
  return item.kind === 'temporary' || (rule.usedBeforeMs !== undefined && item.lastUsedMs < rule.usedBeforeMs);
}

const sum = (items: readonly CacheItem[]): number => items.reduce((total, item) => total + item.bytes, 0);

describe('planEviction', () => {
  it('removes only candidates, always the expired ones, and never the protected entry or a fresh temporary', () => {
    fc.assert(
      fc.property(fc.array(itemArb, { maxLength: 30 }), ruleArb, (items, rule) => {
        const removed = new Set(planEviction(items, rule));
        for (const item of items) {
          if (!isCandidate(item, rule)) expect(removed.has(item)).toBe(false);
          else if (isExpired(item, rule)) expect(removed.has(item)).toBe(true);
        }
      }),
    );
  });

  it('evicts for size in LRU order, down to the target and no further', () => {
    fc.assert(
      fc.property(fc.array(itemArb, { maxLength: 30 }), ruleArb, (items, rule) => {
        const removed = planEviction(items, rule);
        const gone = new Set(removed);
        const bySize = removed.filter((item) => !isExpired(item, rule));
        const keptCandidates = items.filter((item) => !gone.has(item) && isCandidate(item, rule));
        const kept = sum(items) - sum(removed);
        for (const evicted of bySize) for (const other of keptCandidates) expect(evicted.lastUsedMs).toBeLessThanOrEqual(other.lastUsedMs);
        if (rule.maxBytes === undefined || sum(items) - sum(removed.filter((i) => isExpired(i, rule))) <= rule.maxBytes) {
          expect(bySize).toEqual([]);
          return;
        }
        const target = rule.targetBytes ?? rule.maxBytes;
        expect(kept <= target || keptCandidates.length === 0).toBe(true);
        const last = bySize.at(-1);
        if (last) expect(kept + last.bytes).toBeGreaterThan(target);
      }),
    );
  });

  it('sums usage by kind, with the oldest and newest use', () => {
    const [a, b] = [
      { kind: 'entry', name: 'a', path: '/a', bytes: 10, lastUsedMs: 5 },
      { kind: 'failed', name: 'b', path: '/b', bytes: 3, lastUsedMs: 9 },
    ] as const;
    expect(cacheUsage([a, b])).toEqual({ entries: 1, failed: 1, temporary: 0, bytes: 13, oldestUseMs: 5, newestUseMs: 9 });
    expect(cacheUsage([])).toEqual({ entries: 0, failed: 0, temporary: 0, bytes: 0 });
  });
});

describe('pruneKernelCache', () => {
  let root: string;

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'tilekit-prune-spec-'));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  /** Entries 0..count-1, entry i last used i+1 days ago, 1 KiB cubin each. */
  async function populate(count: number): Promise<string[]> {
    const cache = new KernelCache(root, { enabled: true, maxBytes: Infinity });
    const keys: string[] = [];
    for (let i = 0; i < count; i += 1) {
      const key = testCacheKey(i);
      const entry = await cache.publish(key, await stageCacheEntry(cache, key, new Uint8Array(1024).fill(i)));
      const seconds = (NOW - (i + 1) * DAY) / 1000;
      await utimes(entry.dir, seconds, seconds);
      keys.push(key);
    }
    return keys;
  }

  async function listing(dir: string): Promise<string[]> {
    const entries = await readdir(dir, { recursive: true });
    return entries.map((path) => relative(dir, join(dir, path))).sort();
  }

  it('with dryRun reports what it would remove and removes nothing', async () => {
    await populate(5);
    const before = await listing(root);
    const dry = await pruneKernelCache({ dir: root, maxBytes: 2 * 1500, olderThanDays: 4.5, dryRun: true, now: NOW });
    expect(await listing(root)).toEqual(before);
    expect(dry.dryRun).toBe(true);
    expect(dry.removed.length).toBeGreaterThan(0);
    const real = await pruneKernelCache({ dir: root, maxBytes: 2 * 1500, olderThanDays: 4.5, now: NOW });
    expect(real.removed.map((item) => item.name)).toEqual(dry.removed.map((item) => item.name));
    expect(real.after).toEqual(dry.after);
    expect(await kernelCacheUsage(root)).toEqual(real.after);
  });

  it('removes entries unused for olderThanDays, oldest first for maxBytes', async () => {
    const keys = await populate(5);
    const aged = await pruneKernelCache({ dir: root, olderThanDays: 3.5, now: NOW });
    expect(aged.removed.map((item) => item.name).sort()).toEqual([keys[3], keys[4]].sort());
    const sized = await pruneKernelCache({ dir: root, maxBytes: aged.after.bytes - 1, now: NOW });
    expect(sized.removed.map((item) => item.name)).toEqual([keys[2]]);
    expect(sized.after.entries).toBe(2);
    const emptied = await pruneKernelCache({ dir: root, maxBytes: 0, now: NOW });
    expect(emptied.after).toEqual({ entries: 0, failed: 0, temporary: 0, bytes: 0 });
  });

  it('removes stale temporaries, keeps fresh ones, and leaves directories it did not name alone', async () => {
    await populate(1);
    const shard = join(root, testCacheKey(0).slice(0, 2));
    const stale = join(shard, `.staging-${'a'.repeat(12)}-x`);
    const fresh = join(shard, `.staging-${'b'.repeat(12)}-y`);
    for (const dir of [stale, fresh, join(root, 'mine'), join(shard, 'notes'), join(root, 'failed', 'keep-me')]) {
      await mkdir(dir, { recursive: true });
      await writeFile(join(dir, 'f'), 'x');
    }
    const old = (NOW - TEMPORARY_GRACE_MS - 1000) / 1000;
    await utimes(stale, old, old);
    const young = (NOW - 1000) / 1000;
    await utimes(fresh, young, young);
    const result = await pruneKernelCache({ dir: root, now: NOW });
    expect(result.removed.map((item) => item.path)).toEqual([stale]);
    expect(result.after).toMatchObject({ entries: 1, temporary: 1 });
    expect((await readdir(root)).sort()).toEqual([testCacheKey(0).slice(0, 2), 'failed', 'mine'].sort());
    expect(await readdir(join(root, 'failed'))).toEqual(['keep-me']);
  });

  it('reports an empty cache for a directory that does not exist', async () => {
    const result = await pruneKernelCache({ dir: join(root, 'absent'), maxBytes: 0 });
    expect(result.before).toEqual({ entries: 0, failed: 0, temporary: 0, bytes: 0 });
    expect(result.removed).toEqual([]);
  });

  it('rejects bad options with an ArgumentError naming the option', async () => {
    await expect(pruneKernelCache({ dir: root, maxBytes: -1 })).rejects.toThrow(/^maxBytes: must be a number of bytes >= 0/);
    await expect(pruneKernelCache({ dir: root, olderThanDays: Number.NaN })).rejects.toThrow(ArgumentError);
    await expect(pruneKernelCache({ dir: '' })).rejects.toThrow(/^dir: must be a non-empty path/);
  });
});
