// CI: every FFPA instance compiles for sm_90a with nvcc exactly as the runner compiles it, with no
// register spills, no stack frame, no static shared memory and none of ptxas's Hopper performance
// diagnostics. No GPU needed; skipped LOUDLY without nvcc. Progress is printed per instance.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FMHA_FWD_COMPILE_FLAGS } from '@tilekit/fmha';
import { NvccCompiler } from '@tilekit/runtime';
import { catalogCompileProblems } from '@tilekit/runtime/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { FFPA_CATALOG, FFPA_CLUSTER_DIMS, FFPA_INSTANCE_DIMS } from './ffpaCatalog.ts';

const hasNvcc = NvccCompiler.available();
if (!hasNvcc)
  console.warn(
    '\n!!! SKIPPING the ffpa catalog compile test: nvcc not found (set TILEKIT_NVCC). The kernels are NOT being compiled. !!!\n',
  );

describe('ffpa catalog', () => {
  it('one instance per dtype, (d, slice width) and mask kind, plus cluster instances (d 640, 768); names unique, ffpa_fwd_sm90_…', () => {
    const names = new Set(FFPA_CATALOG.map((i) => i.name));
    expect(names.size).toBe(FFPA_CATALOG.length);
    expect(FFPA_CATALOG.length).toBe(2 * (FFPA_INSTANCE_DIMS.length + 2) * 2);
    for (const name of names) expect(name).toMatch(/^ffpa_fwd_sm90_/);
    for (const i of FFPA_CATALOG) expect(i.source()).toContain('@tilekit/kernel-ffpa');
    const columns = FFPA_CATALOG.filter((i) => i.clusterCtas === 1);
    expect(columns).toHaveLength(2 * FFPA_INSTANCE_DIMS.length * 2);
    for (const i of columns) {
      expect(i.name).not.toMatch(/_cl\d/);
      expect(i.policy.qkSource?.tag).toBe('chunked');
      expect(FFPA_INSTANCE_DIMS).toContainEqual({ headDim: i.policy.headDim, headDimV: i.policy.headDimV });
    }
  });

  it('the cluster instances: d = d_v ∈ {640, 768}, d_v/2 columns per CTA, a cluster Q·Kᵀ of 2 CTAs launched as [1,2,1] clusters', () => {
    expect(FFPA_CLUSTER_DIMS).toEqual([
      { headDim: 640, headDimV: 320 },
      { headDim: 768, headDimV: 384 },
    ]);
    const clusters = FFPA_CATALOG.filter((i) => i.clusterCtas !== 1);
    expect(clusters).toHaveLength(2 * 2 * 2);
    const seen = new Set<string>();
    for (const i of clusters) {
      const P = i.policy;
      expect(i.clusterCtas).toBe(2);
      expect(P.qkSource?.tag).toBe('cluster');
      expect([640, 768]).toContain(P.headDim);
      expect(P.headDimV).toBe(P.headDim / 2);
      expect(i.name).toMatch(new RegExp(`^ffpa_fwd_sm90_${P.dtype}_d${P.headDim}x${P.headDimV}_${P.mask}_.*_qkc4_cl2$`));
      expect(i.launch(3, 5, 129)).toEqual({ grid: [3, 10, 3], block: [i.threads, 1, 1], sharedBytes: i.sharedBytes, cluster: [1, 2, 1] });
      seen.add(`${P.dtype} ${P.headDim} ${P.mask}`);
    }
    expect(seen.size).toBe(8);
  });

  it('slice widths are at most 512 columns, multiples of 64, and never wider than d', () => {
    for (const { headDim, headDimV } of FFPA_INSTANCE_DIMS) {
      expect(headDimV % 64).toBe(0);
      expect(headDimV).toBeLessThanOrEqual(Math.min(512, headDim));
    }
  });
});

describe.runIf(hasNvcc)('ffpa catalog: every instance compiles for sm_90a without spills', () => {
  const cacheDir = mkdtempSync(join(tmpdir(), 'tilekit-ffpa-catalog-'));
  afterAll(() => rmSync(cacheDir, { recursive: true, force: true }));

  it(`compiles all ${FFPA_CATALOG.length} instances`, async () => {
    expect(await catalogCompileProblems('ffpa', FFPA_CATALOG, new NvccCompiler({ cacheDir }), FMHA_FWD_COMPILE_FLAGS)).toEqual([]);
  }, 600_000);
});
