// CI: every sparse MLA instance compiles for sm_90a with nvcc as the launcher compiles it: no
// spills, no stack frame, no static shared memory. Skipped LOUDLY without nvcc.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NvccCompiler } from '@tilekit/runtime';
import { catalogCompileProblems } from '@tilekit/runtime/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { DSA_COMPILE_FLAGS } from '../dsaKernel.ts';
import { DSA_SPARSE_MLA_COMBINE, DSA_SPARSE_MLA_DECODE_CATALOG } from './dsaSparseMlaDecodeCatalog.ts';
import { DSA_SPARSE_MLA_PREFILL_CATALOG } from './dsaSparseMlaPrefillCatalog.ts';

const hasNvcc = NvccCompiler.available();
if (!hasNvcc)
  console.warn(
    '\n!!! SKIPPING the dsa sparse MLA compile test: nvcc not found (set TILEKIT_NVCC). The kernels are NOT being compiled. !!!\n',
  );

describe.runIf(hasNvcc)('dsa sparse MLA catalog: every instance compiles for sm_90a without spills', () => {
  const cacheDir = mkdtempSync(join(tmpdir(), 'tilekit-dsa-mla-'));
  afterAll(() => rmSync(cacheDir, { recursive: true, force: true }));
  const compiler = new NvccCompiler({ cacheDir });

  it(`compiles the ${DSA_SPARSE_MLA_PREFILL_CATALOG.length} sparse MLA prefill instance(s)`, async () => {
    expect(await catalogCompileProblems('dsa sparse MLA prefill', DSA_SPARSE_MLA_PREFILL_CATALOG, compiler, DSA_COMPILE_FLAGS)).toEqual([]);
  }, 600_000);

  it(`compiles the ${DSA_SPARSE_MLA_DECODE_CATALOG.length} sparse MLA decode instance(s) and the combine`, async () => {
    const all = [...DSA_SPARSE_MLA_DECODE_CATALOG, DSA_SPARSE_MLA_COMBINE];
    expect(await catalogCompileProblems('dsa sparse MLA decode', all, compiler, DSA_COMPILE_FLAGS)).toEqual([]);
  }, 600_000);
});
