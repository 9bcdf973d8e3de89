// CI: every top-k instance (the single-CTA, the cluster and the two-read catalog) compiles for sm_90a with nvcc as
// the launcher compiles it: no spills, no stack frame, no static shared memory (all of it is
// dynamic). Skipped LOUDLY without nvcc.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NvccCompiler } from '@tilekit/runtime';
import { catalogCompileProblems } from '@tilekit/runtime/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { DSA_COMPILE_FLAGS } from '../dsaKernel.ts';
import { DSA_TOPK_CATALOG, DSA_TOPK_CLUSTER_CATALOG } from './dsaTopkCatalog.ts';
import { DSA_TOPK_TWO_READ_CATALOG } from './dsaTopkTwoReadCatalog.ts';

const hasNvcc = NvccCompiler.available();
if (!hasNvcc)
  console.warn('\n!!! SKIPPING the dsa top-k compile test: nvcc not found (set TILEKIT_NVCC). The kernels are NOT being compiled. !!!\n');

describe.runIf(hasNvcc)('dsa top-k catalog: every instance compiles for sm_90a without spills', () => {
  const cacheDir = mkdtempSync(join(tmpdir(), 'tilekit-dsa-topk-'));
  afterAll(() => rmSync(cacheDir, { recursive: true, force: true }));
  const compiler = new NvccCompiler({ cacheDir });

  it(`compiles the ${DSA_TOPK_CATALOG.length} single-CTA top-k instances`, async () => {
    expect(await catalogCompileProblems('dsa top-k', DSA_TOPK_CATALOG, compiler, DSA_COMPILE_FLAGS)).toEqual([]);
  }, 600_000);

  it(`compiles the ${DSA_TOPK_CLUSTER_CATALOG.length} cluster top-k instances`, async () => {
    expect(await catalogCompileProblems('dsa top-k cluster', DSA_TOPK_CLUSTER_CATALOG, compiler, DSA_COMPILE_FLAGS)).toEqual([]);
  }, 600_000);

  it(`compiles the ${DSA_TOPK_TWO_READ_CATALOG.length} two-read top-k instances`, async () => {
    expect(await catalogCompileProblems('dsa top-k two-read', DSA_TOPK_TWO_READ_CATALOG, compiler, DSA_COMPILE_FLAGS)).toEqual([]);
  }, 600_000);
});
