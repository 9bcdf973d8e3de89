// A cluster instance of the sm_90a forward (FmhaFwdClusterQkSource: two CTAs per query tile and head
// split Q·Kᵀ's head dim and O's columns): its launch geometry (grid y = heads · 2 in [1, 2, 1]
// clusters; none on a one-CTA instance), its predicates (the kernel's d_v is headDimV · 2, at most
// 32767 query heads) and the cluster code in its source. Built here as FFPA's catalog builds its d768
// cluster instances (libs cannot import kernels/ffpa).
import { checkFmhaFwdProblem, type CheckedFmhaFwdProblem, type FmhaFwdDType } from '@tilekit/fmha';
import {
  FMHA_FWD_REGISTER_SPLIT,
  FMHA_FWD_SOFTMAX_OVERLAP_SCHEDULE,
  FMHA_FWD_STAGES,
  FmhaFwdChunkedQkSource,
  FmhaFwdClusterQkSource,
  FmhaFwdSharePOutputSplit,
  type FmhaFwdQkSource,
} from '@tilekit/fmha';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FmhaFwdInstance, type FmhaFwdInstanceHeader } from './fmhaFwdInstance.ts';
import { fmhaFwdUnsupported } from './fmhaFwdUnsupported.ts';

const HEADER: FmhaFwdInstanceHeader = { prefix: 'test_fwd_sm90', title: 'cluster spec', generator: 'fmhaFwdInstanceCluster.spec' };

/** FFPA's instance of d 768 with `headDimV` columns of O per CTA, on `qkSource`. */
function instance(qkSource: FmhaFwdQkSource, headDimV = 384, dtype: FmhaFwdDType = 'fp16'): FmhaFwdInstance {
  return new FmhaFwdInstance(
    {
      dtype,
      headDim: 768,
      headDimV,
      tileM: 64,
      tileN: 64,
      qkSource,
      outputSplit: new FmhaFwdSharePOutputSplit(),
      schedule: FMHA_FWD_SOFTMAX_OVERLAP_SCHEDULE,
      stages: FMHA_FWD_STAGES,
      ...FMHA_FWD_REGISTER_SPLIT,
      mask: 'none',
      splitKv: false,
    },
    undefined,
    HEADER,
  );
}

const cluster = instance(new FmhaFwdClusterQkSource(4));
const single = instance(new FmhaFwdChunkedQkSource(4));

/** A checked d768 problem (no mask, LSE) with `nheadQ` heads and d_v `hdimV`. */
function problem(hdimV: number, nheadQ = 4, dtype: FmhaFwdDType = 'fp16'): CheckedFmhaFwdProblem {
  return checkFmhaFwdProblem(
    { dtype, batch: 2, nheadQ, nheadK: 1, hdimQ: 768, hdimV, seqlenQ: 130, seqlenK: 200, lse: true },
    { headDims: [{ hdimQ: 768, hdimV }] },
  );
}

describe('FmhaFwdInstance with a cluster Q·Kᵀ source', () => {
  it('names and sizes: clusterCtas 2 (1 without), the same threads, a _qkc4_cl2 name', () => {
    expect(cluster.clusterCtas).toBe(2);
    expect(single.clusterCtas).toBe(1);
    expect(cluster.name).toBe('test_fwd_sm90_fp16_d768x384_none_64x64_s2_split0_dvslices2_psmem_qkc4_cl2');
    expect(single.name).toBe('test_fwd_sm90_fp16_d768x384_none_64x64_s2_split0_dvslices2_psmem_qkc4');
    expect(cluster.threads).toBe(384);
    // Two fp32 64 × 64 exchange buffers and four more mbarriers.
    expect(cluster.sharedBytes).toBe(single.sharedBytes + 2 * 64 * 64 * 4 + 4 * 8);
  });

  it('launch(): grid (query tiles, 2 · heads, batch) in clusters of [1, 2, 1]; a one-CTA instance has heads in y and no cluster key', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 16 }),
        fc.integer({ min: 1, max: 32767 }),
        fc.integer({ min: 0, max: 5000 }),
        (batch, heads, seqlenQ) => {
          const tiles = Math.max(1, Math.ceil(seqlenQ / 64));
          const l = cluster.launch(batch, heads, seqlenQ);
          expect(l).toEqual({ grid: [tiles, 2 * heads, batch], block: [384, 1, 1], sharedBytes: cluster.sharedBytes, cluster: [1, 2, 1] });
          expect(l.grid[1]).toBeLessThanOrEqual(65535);
          const s = single.launch(batch, heads, seqlenQ);
          expect(s).toEqual({ grid: [tiles, heads, batch], block: [384, 1, 1], sharedBytes: single.sharedBytes });
          expect('cluster' in s).toBe(false);
        },
      ),
    );
  });

  it("fmhaFwdUnsupported: the cluster instance's d_v is 2 · 384 = 768 (384 is rejected); the one-CTA instance's is 384", () => {
    expect(fmhaFwdUnsupported(cluster, problem(768))).toEqual([]);
    expect(fmhaFwdUnsupported(cluster, problem(384))).toEqual(['head dims 768/384: this kernel has 768/768']);
    expect(fmhaFwdUnsupported(single, problem(384))).toEqual([]);
    expect(fmhaFwdUnsupported(single, problem(768))).toEqual(['head dims 768/768: this kernel has 768/384']);
    // The other predicates still apply.
    expect(fmhaFwdUnsupported(cluster, problem(768, 4, 'bf16'))).toEqual(['dtype bf16: this kernel computes fp16']);
  });

  it('fmhaFwdUnsupported: at most 32767 query heads for a cluster of 2 (grid y = 2 · heads ≤ 65535); a one-CTA instance takes 65535', () => {
    expect(fmhaFwdUnsupported(cluster, problem(768, 32767))).toEqual([]);
    expect(fmhaFwdUnsupported(cluster, problem(768, 32768))).toEqual([
      '32768 query heads: a cluster of 2 CTAs per head allows at most 32767',
    ]);
    expect(fmhaFwdUnsupported(cluster, problem(768, 65535))).toHaveLength(1);
    expect(fmhaFwdUnsupported(single, problem(384, 32768))).toEqual([]);
    expect(fmhaFwdUnsupported(single, problem(384, 65535))).toEqual([]);
    expect(cluster.launch(1, 32767, 1).grid[1]).toBe(65534);
  });

  it('the source: the CTA rank, distributed shared memory (mapa, st.async), cluster barriers and acquire.cluster waits; none in the one-CTA source', () => {
    const text = cluster.source();
    const plain = single.source();
    for (const ptx of ['%cluster_ctarank', 'mapa.shared::cluster', 'st.async', 'barrier.cluster', 'acquire.cluster']) {
      expect(text, ptx).toContain(ptx);
      expect(plain, ptx).not.toContain(ptx);
    }
    // Each CTA's columns of V and O: its rank (blockIdx.y − 2 · head) · 384.
    expect(text).toMatch(/cta_cols/);
    expect(plain).not.toMatch(/cta_cols/);
  });
});
