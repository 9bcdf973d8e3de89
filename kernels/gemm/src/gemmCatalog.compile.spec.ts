// CI: every instance of the catalog compiles for sm_90a with nvcc, exactly as the launcher compiles
// it (same source, flags and arch), with no register spills, no stack frame, no static shared
// memory, and none of ptxas's Hopper performance diagnostics (C7515: wgmma serialized; C7508/C7510:
// setmaxnreg ignored). No GPU needed; skipped LOUDLY without nvcc. Progress is printed per instance.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NvccCompiler } from '@tilekit/runtime';
import { catalogCompileProblems } from '@tilekit/runtime/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { GEMM_CATALOG } from './gemmCatalog.ts';
import { GEMM_COMPILE_FLAGS } from './gemmLauncher.ts';

const hasNvcc = NvccCompiler.available();
if (!hasNvcc)
  console.warn(
    '\n!!! SKIPPING the gemm catalog compile test: nvcc not found (set TILEKIT_NVCC). The kernels are NOT being compiled. !!!\n',
  );

describe.runIf(hasNvcc)('gemm catalog: every instance compiles for sm_90a without spills', () => {
  const cacheDir = mkdtempSync(join(tmpdir(), 'tilekit-gemm-catalog-'));
  afterAll(() => rmSync(cacheDir, { recursive: true, force: true }));

  it(`compiles all ${GEMM_CATALOG.length} instances`, async () => {
    expect(await catalogCompileProblems('gemm catalog', GEMM_CATALOG, new NvccCompiler({ cacheDir }), GEMM_COMPILE_FLAGS)).toEqual([]);
  }, 600_000);
});
