// CI: every cache-writer, decode-indexer and prefill-indexer instance compiles for sm_90a with nvcc
// as the launchers compile it: no spills, no stack frame. Skipped LOUDLY without nvcc.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NvccCompiler } from '@tilekit/runtime';
import { catalogCompileProblems } from '@tilekit/runtime/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { DSA_INDEX_CACHE_WRITER_CATALOG } from '../cache/dsaIndexCacheWriterCatalog.ts';
import { DSA_COMPILE_FLAGS } from '../dsaKernel.ts';
import { DSA_INDEXER_DECODE_CATALOG } from './dsaIndexerDecodeCatalog.ts';
import { DSA_INDEXER_PREFILL_CATALOG } from './dsaIndexerPrefillCatalog.ts';

const hasNvcc = NvccCompiler.available();
if (!hasNvcc)
  console.warn('\n!!! SKIPPING the DSA indexer compile test: nvcc not found (set TILEKIT_NVCC). The kernels are NOT being compiled. !!!\n');

describe.runIf(hasNvcc)('DSA cache writer and indexer catalogs: every instance compiles for sm_90a without spills', () => {
  const cacheDir = mkdtempSync(join(tmpdir(), 'tilekit-dsa-indexer-'));
  afterAll(() => rmSync(cacheDir, { recursive: true, force: true }));
  const compiler = new NvccCompiler({ cacheDir });
  const catalogs = [
    ['cache writer', DSA_INDEX_CACHE_WRITER_CATALOG],
    ['decode indexer', DSA_INDEXER_DECODE_CATALOG],
    ['prefill indexer', DSA_INDEXER_PREFILL_CATALOG],
  ] as const;
  for (const [label, catalog] of catalogs) {
    it(`compiles the ${catalog.length} ${label} instances`, async () => {
      expect(await catalogCompileProblems(`dsa ${label}`, catalog, compiler, DSA_COMPILE_FLAGS)).toEqual([]);
    }, 600_000);
  }
});
