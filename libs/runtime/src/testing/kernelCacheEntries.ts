import { readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CACHE_FORMAT, ENTRY_FILES, sha256, type KernelCache } from '../kernelCache.ts';

/**
 * Test helper for the cache specs: stages a complete entry for `key` (source, log, cubin,
 * meta.json) as a compiler would, and returns the staging directory to publish.
 */
export async function stageCacheEntry(cache: KernelCache, key: string, cubin: Uint8Array, tag = 'entry'): Promise<string> {
  const dir = await cache.stage(key);
  await writeFile(join(dir, ENTRY_FILES.source), `// ${tag}\n`);
  await writeFile(join(dir, ENTRY_FILES.log), tag);
  await writeFile(join(dir, ENTRY_FILES.binary), cubin);
  const meta = {
    format: CACHE_FORMAT,
    key,
    compiler: 'nvcc',
    compilerVersion: 'test',
    arch: 'sm_90a',
    flags: [],
    name: 'k',
    functions: {},
    resourcesReported: false,
    cubinSha256: sha256(cubin),
    cubinBytes: cubin.length,
    hasPtx: false,
    createdAt: new Date(0).toISOString(),
  };
  await writeFile(join(dir, ENTRY_FILES.meta), JSON.stringify(meta));
  return dir;
}

/** Sum of the sizes of the files directly in `dir` (what the cache counts for a flat entry). */
export async function flatDirectoryBytes(dir: string): Promise<number> {
  let bytes = 0;
  for (const name of await readdir(dir)) bytes += (await stat(join(dir, name))).size;
  return bytes;
}

/** A 64-hex cache key derived from `n`, so tests can name keys by small integers. */
export function testCacheKey(n: number): string {
  return sha256(`test key ${n}`);
}
