import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fc, test } from '@fast-check/vitest';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cacheKey, defaultCacheDir, ENTRY_FILES, KernelCache, type CacheKeyParts } from './kernelCache.ts';
import { stageCacheEntry } from './testing/kernelCacheEntries.ts';

const partsArb = fc.record({
  compiler: fc.constantFrom('nvcc', 'nvrtc'),
  compilerVersion: fc.string(),
  arch: fc.constantFrom('sm_80', 'sm_90a', 'sm_100a'),
  flags: fc.array(fc.string({ minLength: 1 }), { maxLength: 4 }),
  source: fc.string(),
});

describe('cacheKey', () => {
  test.prop([partsArb])('is a deterministic sha256', (parts) => {
    expect(cacheKey(parts)).toMatch(/^[0-9a-f]{64}$/);
    expect(cacheKey({ ...parts, flags: [...parts.flags] })).toBe(cacheKey(parts));
  });

  test.prop([partsArb, partsArb, fc.constantFrom<keyof CacheKeyParts>('compiler', 'compilerVersion', 'arch', 'flags', 'source')])(
    'changes when any one part changes',
    (parts, other, field) => {
      const changed = { ...parts, [field]: other[field] };
      fc.pre(JSON.stringify(changed[field]) !== JSON.stringify(parts[field]));
      expect(cacheKey(changed)).not.toBe(cacheKey(parts));
    },
  );

  it('keeps flag order significant (-I a -I b differs from -I b -I a)', () => {
    const parts = { compiler: 'nvcc', compilerVersion: 'v', arch: 'sm_90a', source: 's' };
    expect(cacheKey({ ...parts, flags: ['-Ia', '-Ib'] })).not.toBe(cacheKey({ ...parts, flags: ['-Ib', '-Ia'] }));
  });

  it('defaults to $TILEKIT_CACHE_DIR, else ~/.cache/tilekit/kernels', () => {
    expect(defaultCacheDir({ TILEKIT_CACHE_DIR: '/x/y' })).toBe('/x/y');
    expect(defaultCacheDir({})).toMatch(/\.cache\/tilekit\/kernels$/);
  });
});

describe('KernelCache', () => {
  let root: string;
  const key = 'ab'.padEnd(64, '0');

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'tilekit-cache-spec-'));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  const stageEntry = (cache: KernelCache, cubin: Uint8Array, tag: string): Promise<string> => stageCacheEntry(cache, key, cubin, tag);

  it('misses, then hits after publish; the entry lives at <root>/<key[0:2]>/<key>', async () => {
    const cache = new KernelCache(root);
    expect(await cache.lookup(key)).toBeUndefined();
    const entry = await cache.publish(key, await stageEntry(cache, new Uint8Array([1, 2, 3]), 'one'));
    expect(entry.dir).toBe(join(root, 'ab', key));
    expect(entry.cubin).toEqual(new Uint8Array([1, 2, 3]));
    expect((await cache.lookup(key))?.log).toBe('one');
  });

  it('lets the first of racing writers win and leaves no staging directories', async () => {
    const cache = new KernelCache(root);
    const staged = await Promise.all(Array.from({ length: 8 }, (_, i) => stageEntry(cache, new Uint8Array([7, 7, 7, i]), `writer ${i}`)));
    const published = await Promise.all(staged.map((dir) => cache.publish(key, dir)));
    const winner = published[0]!;
    for (const entry of published) {
      expect(entry.dir).toBe(winner.dir);
      expect(entry.cubin).toEqual(winner.cubin);
      expect(entry.log).toBe(winner.log);
    }
    expect(await readdir(join(root, 'ab'))).toEqual([key]);
  });

  it('treats a corrupt entry as a miss and replaces it on the next publish', async () => {
    const cache = new KernelCache(root);
    await cache.publish(key, await stageEntry(cache, new Uint8Array([1, 2, 3]), 'good'));
    await writeFile(join(root, 'ab', key, ENTRY_FILES.binary), new Uint8Array([1, 2])); // truncated
    expect(await cache.lookup(key)).toBeUndefined();
    const entry = await cache.publish(key, await stageEntry(cache, new Uint8Array([4, 5, 6]), 'fresh'));
    expect(entry.cubin).toEqual(new Uint8Array([4, 5, 6]));
    expect((await cache.lookup(key))?.log).toBe('fresh');
    expect((await readdir(join(root, 'ab'))).sort()).toEqual([key]);
  });

  it('keeps a failed compile under failed/<key>, replacing an older failure', async () => {
    const cache = new KernelCache(root);
    const first = await cache.keepFailure(key, await stageEntry(cache, new Uint8Array([1]), 'first'));
    const second = await cache.keepFailure(key, await stageEntry(cache, new Uint8Array([2]), 'second'));
    expect(first).toBe(join(root, 'failed', key));
    expect(second).toBe(first);
    expect(await readdir(join(root, 'ab'))).toEqual([]);
  });
});
