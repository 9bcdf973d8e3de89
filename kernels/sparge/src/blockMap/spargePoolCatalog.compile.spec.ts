// CI: every block-map row kernel (pooling, K-mean partial and finalize) compiles for sm_90a with nvcc
// exactly as the launcher compiles it: no spills, no stack frame, the static shared memory the
// instance declares. No GPU needed; skipped LOUDLY without nvcc.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NvccCompiler } from '@tilekit/runtime';
import { catalogCompileProblems } from '@tilekit/runtime/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { SPARGE_POOL_ALL_INSTANCES, SPARGE_POOL_COMPILE_FLAGS } from './spargePoolCatalog.ts';

const hasNvcc = NvccCompiler.available();
if (!hasNvcc)
  console.warn(
    '\n!!! SKIPPING the sparge block-map catalog compile test: nvcc not found (set TILEKIT_NVCC). The kernels are NOT being compiled. !!!\n',
  );

describe.runIf(hasNvcc)('sparge block-map row kernels: every instance compiles for sm_90a without spills', () => {
  const cacheDir = mkdtempSync(join(tmpdir(), 'tilekit-sparge-pool-catalog-'));
  afterAll(() => rmSync(cacheDir, { recursive: true, force: true }));
  const compiler = new NvccCompiler({ cacheDir });

  it(`compiles the ${SPARGE_POOL_ALL_INSTANCES.length} instances`, async () => {
    expect(await catalogCompileProblems('sparge pool', SPARGE_POOL_ALL_INSTANCES, compiler, SPARGE_POOL_COMPILE_FLAGS)).toEqual([]);
  }, 600_000);

  it('lists every instance once', () => {
    expect(new Set(SPARGE_POOL_ALL_INSTANCES.map((i) => i.name)).size).toBe(SPARGE_POOL_ALL_INSTANCES.length);
  });
});
