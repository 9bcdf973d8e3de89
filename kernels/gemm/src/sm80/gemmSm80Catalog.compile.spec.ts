// CI: every sm_80 catalog instance compiles with nvcc for sm_80 (A100) AND for sm_90a (the same
// kernel built for Hopper: an sm_80 cubin does not load on sm_90), with the launcher's flags, no
// register spills, no stack frame and no static shared memory. Skipped LOUDLY without nvcc.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sm90a } from '@tilekit/codegen';
import { NvccCompiler } from '@tilekit/runtime';
import { catalogCompileProblems } from '@tilekit/runtime/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { GEMM_COMPILE_FLAGS } from '../gemmLauncher.ts';
import { checkGemmSm80Catalog, GEMM_SM80_CATALOG } from './gemmSm80Catalog.ts';
import { GemmSm80Instance } from './gemmSm80Instance.ts';

const hasNvcc = NvccCompiler.available();
if (!hasNvcc)
  console.warn(
    '\n!!! SKIPPING the sm_80 gemm catalog compile test: nvcc not found (set TILEKIT_NVCC). The kernels are NOT being compiled. !!!\n',
  );

describe.runIf(hasNvcc)('sm_80 gemm catalog: every instance compiles for sm_80 and sm_90a without spills', () => {
  const cacheDir = mkdtempSync(join(tmpdir(), 'tilekit-gemm-sm80-'));
  afterAll(() => rmSync(cacheDir, { recursive: true, force: true }));

  it('names and hashes are unique, also with the sm_90a builds', () => {
    checkGemmSm80Catalog([...GEMM_SM80_CATALOG, ...GEMM_SM80_CATALOG.map((i) => new GemmSm80Instance(i.policy, sm90a))]);
    expect(GEMM_SM80_CATALOG.map((i) => `${i.dtype} ${i.policy.layout}`)).toEqual(['fp16 tn', 'fp16 nn', 'bf16 tn', 'bf16 nn']);
  });

  const builds = GEMM_SM80_CATALOG.flatMap((i) => [i, new GemmSm80Instance(i.policy, sm90a)]);
  it(`compiles all ${builds.length} builds`, async () => {
    expect(await catalogCompileProblems('gemm sm80', builds, new NvccCompiler({ cacheDir }), GEMM_COMPILE_FLAGS)).toEqual([]);
  }, 600_000);
});
