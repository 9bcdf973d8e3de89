// CI: every selection instance compiles for sm_90a with nvcc as the launcher compiles it: no
// spills, no stack frame, no static shared memory (all of it is dynamic). Skipped LOUDLY without nvcc.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NvccCompiler } from '@tilekit/runtime';
import { catalogCompileProblems } from '@tilekit/runtime/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { SPARGE_SELECT_CATALOG, SPARGE_SELECT_COMPILE_FLAGS } from './spargeSelectCatalog.ts';

const hasNvcc = NvccCompiler.available();
if (!hasNvcc)
  console.warn(
    '\n!!! SKIPPING the sparge selection compile test: nvcc not found (set TILEKIT_NVCC). The kernels are NOT being compiled. !!!\n',
  );

describe.runIf(hasNvcc)('sparge selection catalog: every instance compiles for sm_90a without spills', () => {
  const cacheDir = mkdtempSync(join(tmpdir(), 'tilekit-sparge-select-'));
  afterAll(() => rmSync(cacheDir, { recursive: true, force: true }));
  const compiler = new NvccCompiler({ cacheDir });

  it(`compiles the ${SPARGE_SELECT_CATALOG.length} selection instances`, async () => {
    expect(await catalogCompileProblems('sparge select', SPARGE_SELECT_CATALOG, compiler, SPARGE_SELECT_COMPILE_FLAGS)).toEqual([]);
  }, 600_000);
});
