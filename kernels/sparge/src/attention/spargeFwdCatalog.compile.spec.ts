// CI: every sparse attention instance compiles for sm_90a with nvcc exactly as the launcher compiles
// it: no register spills, no stack frame, no static shared memory, none of ptxas's Hopper
// performance diagnostics. No GPU needed; skipped LOUDLY without nvcc. Progress per instance.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FMHA_FWD_COMPILE_FLAGS } from '@tilekit/fmha';
import { NvccCompiler } from '@tilekit/runtime';
import { catalogCompileProblems } from '@tilekit/runtime/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { SPARGE_FWD_CATALOG } from './spargeFwdCatalog.ts';

const hasNvcc = NvccCompiler.available();
if (!hasNvcc)
  console.warn(
    '\n!!! SKIPPING the sparge attention catalog compile test: nvcc not found (set TILEKIT_NVCC). The kernels are NOT being compiled. !!!\n',
  );

describe('sparge attention catalog', () => {
  it('has one instance per (pipeline, dtype, head dim, mask, PV-skip vote, Q·Kᵀ type), names unique', () => {
    const keys = new Set(
      SPARGE_FWD_CATALOG.map(
        (i) =>
          `${i.policy.pipeline} ${i.policy.dtype} ${i.policy.headDim} ${i.policy.mask} ${i.policy.pvGate?.tag} ${i.policy.qkOperand?.tag}`,
      ),
    );
    expect(keys.size).toBe(SPARGE_FWD_CATALOG.length);
    expect(new Set(SPARGE_FWD_CATALOG.map((i) => i.name)).size).toBe(SPARGE_FWD_CATALOG.length);
    expect(SPARGE_FWD_CATALOG.length).toBe(2 * 2 * 2 * 2 * 2 * 2);
  });
});

describe.runIf(hasNvcc)('sparge attention catalog: every instance compiles for sm_90a without spills', () => {
  const cacheDir = mkdtempSync(join(tmpdir(), 'tilekit-sparge-fwd-catalog-'));
  afterAll(() => rmSync(cacheDir, { recursive: true, force: true }));

  it(`compiles all ${SPARGE_FWD_CATALOG.length} instances`, async () => {
    expect(
      await catalogCompileProblems('sparge attention catalog', SPARGE_FWD_CATALOG, new NvccCompiler({ cacheDir }), FMHA_FWD_COMPILE_FLAGS),
    ).toEqual([]);
  }, 900_000);
});
