import { existsSync } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { pruneKernelCache } from './cachePrune.ts';
import { CachingCompiler, type CompilerRun } from './compiler.ts';
import { CAP_RESCAN_STORES, KernelCache } from './kernelCache.ts';
import { CACHE_EVICTION_TARGET } from './kernelCacheSettings.ts';
import { scanKernelCache } from './kernelCacheScan.ts';
import { flatDirectoryBytes, stageCacheEntry, testCacheKey } from './testing/kernelCacheEntries.ts';

let root: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'tilekit-cache-cap-'));
});
afterEach(async () => {
  vi.unstubAllEnvs();
  await rm(root, { recursive: true, force: true });
});

type Op = { readonly op: 'store'; readonly key: number; readonly size: number } | { readonly op: 'lookup'; readonly key: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ op: fc.constant('store' as const), key: fc.integer({ min: 0, max: 7 }), size: fc.integer({ min: 1, max: 4000 }) }),
  fc.record({ op: fc.constant('lookup' as const), key: fc.integer({ min: 0, max: 7 }) }),
);

/** The reference model: key → bytes and last use; eviction as documented on KernelCache. */
class LruModel {
  readonly entries = new Map<string, { bytes: number; lastUsed: number }>();
  readonly maxBytes: number;

  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

  total(): number {
    return [...this.entries.values()].reduce((sum, entry) => sum + entry.bytes, 0);
  }

  store(key: string, bytes: number, now: number): void {
    const existing = this.entries.get(key);
    this.entries.set(key, { bytes: existing?.bytes ?? bytes, lastUsed: now });
    if (this.total() <= this.maxBytes) return;
    const byAge = [...this.entries].filter(([k]) => k !== key).sort((a, b) => a[1].lastUsed - b[1].lastUsed);
    for (const [k] of byAge) {
      if (this.total() <= this.maxBytes * CACHE_EVICTION_TARGET) break;
      this.entries.delete(k);
    }
  }

  lookup(key: string, now: number): boolean {
    const entry = this.entries.get(key);
    if (entry) entry.lastUsed = now;
    return entry !== undefined;
  }
}

async function storedKeys(dir: string): Promise<string[]> {
  return (await scanKernelCache(dir))
    .filter((item) => item.kind === 'entry')
    .map((item) => item.name)
    .sort();
}

describe('KernelCache size cap', () => {
  it('evicts least-recently-used entries to 90% of the cap after a store (model-checked)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1500, max: 12000 }), fc.array(opArb, { minLength: 1, maxLength: 20 }), async (cap, ops) => {
        const dir = await mkdtemp(join(root, 'run-'));
        let clock = 1_700_000_000_000;
        const cache = new KernelCache(dir, { enabled: true, maxBytes: cap, now: () => clock });
        const model = new LruModel(cap);
        for (const op of ops) {
          clock += 1000; // whole seconds: last-use order survives coarse filesystem timestamps
          const key = testCacheKey(op.key);
          if (op.op === 'lookup') {
            expect((await cache.lookup(key)) !== undefined).toBe(model.lookup(key, clock));
            continue;
          }
          const staging = await stageCacheEntry(cache, key, new Uint8Array(op.size).fill(op.key), `k${op.key}`);
          const bytes = await flatDirectoryBytes(staging);
          await cache.publish(key, staging);
          model.store(key, bytes, clock);
          const items = await scanKernelCache(dir);
          const total = items.reduce((sum, item) => sum + item.bytes, 0);
          expect(total <= cap || items.length === 1).toBe(true);
          expect(await storedKeys(dir)).toEqual([...model.entries.keys()].sort());
        }
        await rm(dir, { recursive: true, force: true });
      }),
    );
  });

  it('stamps the entry directory on publish and on every hit', async () => {
    let clock = Date.UTC(2024, 0, 1);
    const cache = new KernelCache(root, { enabled: true, maxBytes: Infinity, now: () => clock });
    const key = testCacheKey(1);
    const entry = await cache.publish(key, await stageCacheEntry(cache, key, new Uint8Array([1, 2, 3])));
    expect((await stat(entry.dir)).mtimeMs).toBe(clock);
    clock += 86_400_000;
    await cache.lookup(key);
    expect((await stat(entry.dir)).mtimeMs).toBe(clock);
  });

  it('keeps the entry just stored even when it alone exceeds the cap', async () => {
    const cache = new KernelCache(root, { enabled: true, maxBytes: 100 });
    const small = testCacheKey(1);
    const big = testCacheKey(2);
    await cache.publish(small, await stageCacheEntry(cache, small, new Uint8Array(10)));
    const entry = await cache.publish(big, await stageCacheEntry(cache, big, new Uint8Array(1000)));
    expect(await storedKeys(root)).toEqual([big]);
    expect((await cache.lookup(big))?.cubin).toEqual(entry.cubin);
  });

  it('rescans within CAP_RESCAN_STORES stores to see what other processes added', async () => {
    const ours = new KernelCache(root, { enabled: true, maxBytes: 64 * 1024 });
    const theirs = new KernelCache(root, { enabled: true, maxBytes: Infinity }); // another process, uncapped
    const store = async (cache: KernelCache, n: number, bytes: number): Promise<void> => {
      const key = testCacheKey(n);
      await cache.publish(key, await stageCacheEntry(cache, key, new Uint8Array(bytes)));
    };
    await store(ours, 0, 10);
    for (let n = 1; n <= 8; n += 1) await store(theirs, n, 16 * 1024);
    for (let n = 100; n < 100 + CAP_RESCAN_STORES; n += 1) await store(ours, n, 10);
    const total = (await scanKernelCache(root)).reduce((sum, item) => sum + item.bytes, 0);
    expect(total).toBeLessThanOrEqual(64 * 1024);
  });

  it('lets concurrent lookups miss, never fail, while entries are evicted and republished', async () => {
    const cache = new KernelCache(root, { enabled: true, maxBytes: Infinity });
    const keys = Array.from({ length: 6 }, (_, i) => testCacheKey(i));
    const cubinOf = (i: number): Uint8Array => new Uint8Array(2048).fill(i + 1);
    const publishAll = (): Promise<unknown> =>
      Promise.all(keys.map(async (key, i) => cache.publish(key, await stageCacheEntry(cache, key, cubinOf(i)))));
    await publishAll();
    let hits = 0;
    let misses = 0;
    const readers = Array.from({ length: 8 }, async () => {
      for (let round = 0; round < 40; round += 1) {
        const i = round % keys.length;
        const entry = await cache.lookup(keys[i]!);
        if (entry === undefined) misses += 1;
        else {
          expect(entry.cubin).toEqual(cubinOf(i));
          hits += 1;
        }
      }
    });
    const churn = (async () => {
      for (let round = 0; round < 15; round += 1) {
        await pruneKernelCache({ dir: root, maxBytes: 0 });
        await publishAll();
      }
    })();
    await Promise.all([...readers, churn]);
    expect(hits + misses).toBe(8 * 40);
    expect(await storedKeys(root)).toEqual([...keys].sort());
  });
});

describe('KernelCache switched off', () => {
  it('misses, stages in a temporary directory and writes nothing under the root', async () => {
    const cacheRoot = join(root, 'cache');
    const cache = new KernelCache(cacheRoot, { enabled: false });
    const key = testCacheKey(1);
    const staging = await stageCacheEntry(cache, key, new Uint8Array([9]));
    const entry = await cache.publish(key, staging);
    expect(entry.dir).toBe(staging);
    expect(entry.cubin).toEqual(new Uint8Array([9]));
    expect(await cache.lookup(key)).toBeUndefined();
    expect(await cache.keepFailure(key, staging)).toBe(staging);
    expect(existsSync(cacheRoot)).toBe(false);
    await rm(staging, { recursive: true, force: true });
  });
});

/** A compiler whose "binary" is the source text: exercises CachingCompiler's use of the cache. */
class EchoCompiler extends CachingCompiler {
  readonly kind = 'nvcc' as const;
  runs = 0;

  version(): Promise<string> {
    return Promise.resolve('echo 1');
  }

  protected effectiveFlags(flags: readonly string[]): Promise<readonly string[]> {
    return Promise.resolve(flags);
  }

  protected run(_dir: string, source: string): Promise<CompilerRun> {
    this.runs += 1;
    return Promise.resolve({ ok: true, log: '', cubin: new TextEncoder().encode(source) });
  }
}

const request = (n: number) => ({ source: `// kernel ${n}\n${'x'.repeat(100)}`, name: 'k', arch: 'sm_90a' as const });

describe('compilers honour the cache environment', () => {
  it('caches under $TILEKIT_CACHE_DIR', async () => {
    vi.stubEnv('TILEKIT_CACHE_DIR', root);
    vi.stubEnv('TILEKIT_CACHE', undefined);
    vi.stubEnv('TILEKIT_CACHE_MAX_MB', undefined);
    const compiler = new EchoCompiler();
    expect((await compiler.compile(request(1))).cached).toBe(false);
    const again = await compiler.compile(request(1));
    expect(again.cached).toBe(true);
    expect(again.binaryPath.startsWith(root)).toBe(true);
    expect(compiler.runs).toBe(1);
  });

  it('compiles every time and writes nothing with TILEKIT_CACHE=off', async () => {
    const cacheRoot = join(root, 'cache');
    vi.stubEnv('TILEKIT_CACHE_DIR', cacheRoot);
    vi.stubEnv('TILEKIT_CACHE', 'off');
    const compiler = new EchoCompiler();
    const first = await compiler.compile(request(1));
    const second = await compiler.compile(request(1));
    expect([first.cached, second.cached, compiler.runs]).toEqual([false, false, 2]);
    expect(existsSync(cacheRoot)).toBe(false);
  });

  it('applies $TILEKIT_CACHE_MAX_MB after each store', async () => {
    vi.stubEnv('TILEKIT_CACHE', undefined);
    vi.stubEnv('TILEKIT_CACHE_DIR', join(root, 'scratch'));
    await new EchoCompiler().compile(request(0));
    const [scratch] = await scanKernelCache(join(root, 'scratch'));
    const entryBytes = scratch!.bytes; // every request(n) entry has this size
    // Two entries fit under the cap, but 90% of it holds only one.
    vi.stubEnv('TILEKIT_CACHE_MAX_MB', String((2.05 * entryBytes) / (1024 * 1024)));
    vi.stubEnv('TILEKIT_CACHE_DIR', join(root, 'capped'));
    const compiler = new EchoCompiler();
    const counts: number[] = [];
    for (const n of [1, 2, 3]) {
      await compiler.compile(request(n));
      counts.push((await scanKernelCache(join(root, 'capped'))).length);
    }
    expect(counts).toEqual([1, 2, 1]);
    expect((await compiler.compile(request(3))).cached).toBe(true);
    expect((await compiler.compile(request(2))).cached).toBe(false);
  });
});
