// CI: every backward instance (dq_dk_dv, dot_do_o, convert_dq) compiles for sm_90a with nvcc
// exactly as the runner compiles it: no spills, no stack frame, no static shared memory, none of
// ptxas's Hopper performance diagnostics. No GPU needed; skipped LOUDLY without nvcc.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NvccCompiler } from '@tilekit/runtime';
import { catalogCompileProblems } from '@tilekit/runtime/testing';
import { afterAll, describe, expect, it } from 'vitest';
import {
  FMHA_BWD_ALL_INSTANCES,
  FMHA_BWD_COMPILE_FLAGS,
  FMHA_BWD_CONVERT_DQ_CATALOG,
  FMHA_BWD_DOT_DO_O_CATALOG,
  FMHA_BWD_DQ_DK_DV_CATALOG,
} from './fmhaBwdCatalog.ts';
import { FMHA_BWD_SCORE_MOD_CATALOG } from './fmhaBwdScoreModCatalog.ts';

const hasNvcc = NvccCompiler.available();
if (!hasNvcc)
  console.warn(
    '\n!!! SKIPPING the fmha-bwd catalog compile test: nvcc not found (set TILEKIT_NVCC). The kernels are NOT being compiled. !!!\n',
  );

describe.runIf(hasNvcc)('fmha-bwd catalog: every instance compiles for sm_90a without spills', () => {
  const cacheDir = mkdtempSync(join(tmpdir(), 'tilekit-fmha-bwd-catalog-'));
  afterAll(() => rmSync(cacheDir, { recursive: true, force: true }));
  const compiler = new NvccCompiler({ cacheDir });

  it(`compiles the ${FMHA_BWD_DOT_DO_O_CATALOG.length} dot_do_o and ${FMHA_BWD_CONVERT_DQ_CATALOG.length} convert_dq instances`, async () => {
    expect(
      await catalogCompileProblems(
        'fmha-bwd rows',
        [...FMHA_BWD_DOT_DO_O_CATALOG, ...FMHA_BWD_CONVERT_DQ_CATALOG],
        compiler,
        FMHA_BWD_COMPILE_FLAGS,
      ),
    ).toEqual([]);
  }, 300_000);

  it(`compiles the ${FMHA_BWD_DQ_DK_DV_CATALOG.length} dq_dk_dv instances`, async () => {
    expect(await catalogCompileProblems('fmha-bwd dq_dk_dv', FMHA_BWD_DQ_DK_DV_CATALOG, compiler, FMHA_BWD_COMPILE_FLAGS)).toEqual([]);
  }, 1_200_000);

  it(`compiles the ${FMHA_BWD_SCORE_MOD_CATALOG.length} dq_dk_dv instances with a score modifier (soft-capping, ALiBi)`, async () => {
    expect(await catalogCompileProblems('fmha-bwd score modifiers', FMHA_BWD_SCORE_MOD_CATALOG, compiler, FMHA_BWD_COMPILE_FLAGS)).toEqual(
      [],
    );
  }, 300_000);

  it('lists every instance once', () => {
    expect(new Set(FMHA_BWD_ALL_INSTANCES.map((i) => i.name)).size).toBe(FMHA_BWD_ALL_INSTANCES.length);
  });
});
