// CI: every attention-forward instance compiles for sm_90a with nvcc exactly as the launcher compiles
// it, with no register spills, no stack frame, no static shared memory and none of ptxas's Hopper
// performance diagnostics (C7515 wgmma serialization; C7508/C7510 setmaxnreg ignored). No GPU
// needed; skipped LOUDLY without nvcc. Progress is printed per instance.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NvccCompiler } from '@tilekit/runtime';
import { catalogCompileProblems } from '@tilekit/runtime/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { checkFmhaFwdCatalog, FMHA_FWD_CATALOG } from './fmhaFwdCatalog.ts';
import { FMHA_FWD_OUTPUT_SPLIT_CATALOG } from './fmhaFwdOutputSplitCatalog.ts';
import { FMHA_FWD_PINGPONG_CATALOG } from './fmhaFwdPingPongCatalog.ts';
import { FMHA_FWD_SCORE_MOD_CATALOG } from './fmhaFwdScoreModCatalog.ts';
import { FMHA_FWD_COMPILE_FLAGS } from '@tilekit/fmha';

const hasNvcc = NvccCompiler.available();
if (!hasNvcc)
  console.warn(
    '\n!!! SKIPPING the fmha-fwd catalog compile test: nvcc not found (set TILEKIT_NVCC). The kernels are NOT being compiled. !!!\n',
  );

describe('fmha-fwd catalog', () => {
  it('names and hashes are unique; every head-dim pair has both mask kinds, with and without split-KV', () => {
    expect(() => checkFmhaFwdCatalog(FMHA_FWD_CATALOG)).not.toThrow();
    const keys = new Set(
      FMHA_FWD_CATALOG.map((i) => `${i.policy.dtype} ${i.policy.headDim}/${i.policy.headDimV} ${i.policy.mask} ${i.policy.splitKv}`),
    );
    expect(keys.size).toBe(FMHA_FWD_CATALOG.length);
    expect(FMHA_FWD_CATALOG.length).toBe(2 * 6 * 2 * 2);
  });
});

describe.runIf(hasNvcc)('fmha-fwd catalog: every instance compiles for sm_90a without spills', () => {
  const cacheDir = mkdtempSync(join(tmpdir(), 'tilekit-fmha-fwd-catalog-'));
  afterAll(() => rmSync(cacheDir, { recursive: true, force: true }));

  it(`compiles all ${FMHA_FWD_CATALOG.length} instances`, async () => {
    expect(
      await catalogCompileProblems('fmha-fwd catalog', FMHA_FWD_CATALOG, new NvccCompiler({ cacheDir }), FMHA_FWD_COMPILE_FLAGS),
    ).toEqual([]);
  }, 900_000);

  it(`compiles the ${FMHA_FWD_SCORE_MOD_CATALOG.length} score-modifier instances (soft-capping, ALiBi)`, async () => {
    const compiler = new NvccCompiler({ cacheDir });
    expect(await catalogCompileProblems('fmha-fwd score modifiers', FMHA_FWD_SCORE_MOD_CATALOG, compiler, FMHA_FWD_COMPILE_FLAGS)).toEqual(
      [],
    );
  }, 300_000);

  it(`compiles the ${FMHA_FWD_PINGPONG_CATALOG.length} ping-pong instances`, async () => {
    const compiler = new NvccCompiler({ cacheDir });
    expect(await catalogCompileProblems('fmha-fwd ping-pong', FMHA_FWD_PINGPONG_CATALOG, compiler, FMHA_FWD_COMPILE_FLAGS)).toEqual([]);
  }, 300_000);

  it(`compiles the ${FMHA_FWD_OUTPUT_SPLIT_CATALOG.length} output-split instances`, async () => {
    const compiler = new NvccCompiler({ cacheDir });
    expect(await catalogCompileProblems('fmha-fwd output split', FMHA_FWD_OUTPUT_SPLIT_CATALOG, compiler, FMHA_FWD_COMPILE_FLAGS)).toEqual(
      [],
    );
  }, 300_000);
});
