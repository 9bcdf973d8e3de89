// CI: every split-KV combine instance compiles for sm_90a with nvcc exactly as the runner compiles
// it: no spills, no stack frame, static shared memory as the instance declares (the weights
// table). No GPU needed; skipped LOUDLY without nvcc.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NvccCompiler } from '@tilekit/runtime';
import { catalogCompileProblems } from '@tilekit/runtime/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { FMHA_FWD_COMBINE_CATALOG } from './fmhaFwdCombine.ts';
import { FMHA_FWD_COMPILE_FLAGS } from '@tilekit/fmha';

const hasNvcc = NvccCompiler.available();
if (!hasNvcc)
  console.warn(
    '\n!!! SKIPPING the fmha-fwd combine compile test: nvcc not found (set TILEKIT_NVCC). The kernels are NOT being compiled. !!!\n',
  );

describe.runIf(hasNvcc)('fmha-fwd combine catalog: every instance compiles for sm_90a without spills', () => {
  const cacheDir = mkdtempSync(join(tmpdir(), 'tilekit-fmha-combine-'));
  afterAll(() => rmSync(cacheDir, { recursive: true, force: true }));

  it(`compiles all ${FMHA_FWD_COMBINE_CATALOG.length} instances`, async () => {
    expect(
      await catalogCompileProblems('fmha-fwd combine', FMHA_FWD_COMBINE_CATALOG, new NvccCompiler({ cacheDir }), FMHA_FWD_COMPILE_FLAGS),
    ).toEqual([]);
  }, 300_000);
});
