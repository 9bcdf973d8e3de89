// CI: every sm_80 attention-forward instance compiles with nvcc for sm_80 (A100) AND for sm_90a (the
// same kernel built for Hopper: an sm_80 cubin does not load on sm_90), with the launcher's flags,
// no register spills, no stack frame and no static shared memory. Skipped LOUDLY without nvcc.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sm80, sm90a } from '@tilekit/codegen';
import { NvccCompiler } from '@tilekit/runtime';
import { catalogCompileProblems } from '@tilekit/runtime/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { FMHA_FWD_COMPILE_FLAGS } from '@tilekit/fmha';
import {
  checkFmhaFwdSm80Catalog,
  FMHA_FWD_SM80_CATALOG,
  FMHA_FWD_SM80_CATALOG_SM90A,
  fmhaFwdSm80CatalogFor,
} from './fmhaFwdSm80Catalog.ts';
import { FmhaFwdSm80Instance } from './fmhaFwdSm80Instance.ts';

/** Pipeline variants outside the catalog (4 warps, Q re-read from shared memory, head dims 32 and 256), compiled for sm_80 too. */
const VARIANTS = [
  new FmhaFwdSm80Instance({ dtype: 'bf16', headDim: 256, headDimV: 256, tileM: 128, tileN: 32, qResidence: 'shared', mask: 'window' }),
  new FmhaFwdSm80Instance({ dtype: 'fp16', headDim: 32, headDimV: 32, tileM: 64, tileN: 64, qResidence: 'registers', mask: 'window' }),
  new FmhaFwdSm80Instance({ dtype: 'fp16', headDim: 128, headDimV: 128, tileM: 64, tileN: 64, qResidence: 'shared', mask: 'none' }),
];

const hasNvcc = NvccCompiler.available();
if (!hasNvcc)
  console.warn(
    '\n!!! SKIPPING the sm_80 fmha-fwd catalog compile test: nvcc not found (set TILEKIT_NVCC). The kernels are NOT being compiled. !!!\n',
  );

describe('sm_80 fmha-fwd catalog', () => {
  it('{fp16, bf16} × d {64, 128} × {none, window}; names and hashes unique with the sm_90a builds', () => {
    expect(() => checkFmhaFwdSm80Catalog([...FMHA_FWD_SM80_CATALOG, ...FMHA_FWD_SM80_CATALOG_SM90A])).not.toThrow();
    expect(FMHA_FWD_SM80_CATALOG.map((i) => `${i.policy.dtype} d${i.policy.headDim} ${i.policy.mask}`)).toEqual([
      'fp16 d64 none',
      'fp16 d64 window',
      'fp16 d128 none',
      'fp16 d128 window',
      'bf16 d64 none',
      'bf16 d64 window',
      'bf16 d128 none',
      'bf16 d128 window',
    ]);
    expect(FMHA_FWD_SM80_CATALOG.every((i) => i.target === sm80 && i.name.endsWith('_sm_80'))).toBe(true);
    expect(FMHA_FWD_SM80_CATALOG_SM90A.every((i) => i.target === sm90a && i.name.endsWith('_sm_90a'))).toBe(true);
    expect(fmhaFwdSm80CatalogFor(sm90a)).toBe(FMHA_FWD_SM80_CATALOG_SM90A);
  });
});

describe.runIf(hasNvcc)(
  'sm_80 fmha-fwd catalog: every instance compiles for sm_80 and sm_90a without spills (and three pipeline variants for sm_80)',
  () => {
    const cacheDir = mkdtempSync(join(tmpdir(), 'tilekit-fmha-fwd-sm80-'));
    afterAll(() => rmSync(cacheDir, { recursive: true, force: true }));

    const builds = [...FMHA_FWD_SM80_CATALOG, ...FMHA_FWD_SM80_CATALOG_SM90A, ...VARIANTS];
    it(`compiles all ${builds.length} builds`, async () => {
      expect(await catalogCompileProblems('fmha-fwd sm80', builds, new NvccCompiler({ cacheDir }), FMHA_FWD_COMPILE_FLAGS)).toEqual([]);
    }, 600_000);
  },
);
