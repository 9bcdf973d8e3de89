// CI: every FP8 MLA cache-writer instance compiles for sm_90a with nvcc as the launcher compiles it: no spills, no
// stack frame. Skipped LOUDLY without nvcc.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NvccCompiler } from '@tilekit/runtime';
import { catalogCompileProblems } from '@tilekit/runtime/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { DSA_COMPILE_FLAGS } from '../dsaKernel.ts';
import { DSA_MLA_CACHE_WRITER_CATALOG } from './dsaMlaCacheWriterCatalog.ts';

const hasNvcc = NvccCompiler.available();
if (!hasNvcc)
  console.warn(
    '\n!!! SKIPPING the DSA MLA cache-writer compile test: nvcc not found (set TILEKIT_NVCC). The kernels are NOT being compiled. !!!\n',
  );

describe.runIf(hasNvcc)('DSA MLA cache-writer catalog: every instance compiles for sm_90a without spills', () => {
  const cacheDir = mkdtempSync(join(tmpdir(), 'tilekit-dsa-mla-cache-'));
  afterAll(() => rmSync(cacheDir, { recursive: true, force: true }));
  const compiler = new NvccCompiler({ cacheDir });

  it(`compiles the ${DSA_MLA_CACHE_WRITER_CATALOG.length} MLA cache-writer instances`, async () => {
    expect(await catalogCompileProblems('dsa MLA cache writer', DSA_MLA_CACHE_WRITER_CATALOG, compiler, DSA_COMPILE_FLAGS)).toEqual([]);
  }, 600_000);
});
