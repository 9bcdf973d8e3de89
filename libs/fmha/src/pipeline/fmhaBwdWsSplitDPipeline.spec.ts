import { describe, expect, it } from 'vitest';
import { blockGemmPolicyErrorOf } from '../testing/blockGemmPolicyErrorOf.ts';
import { FmhaBwdWsSplitDPipeline, type FmhaBwdWsSplitDPolicy } from './fmhaBwdWsSplitDPipeline.ts';

const policy = (extra: Partial<FmhaBwdWsSplitDPolicy> = {}): FmhaBwdWsSplitDPolicy => ({
  dtype: 'bf16',
  headDim: 512,
  headDimV: 512,
  sliceWidth: 256,
  sliceStages: 2,
  producerRegisters: 40,
  consumerRegisters: 232,
  ...extra,
});

const policyErrorOf = (p: FmhaBwdWsSplitDPolicy): string => blockGemmPolicyErrorOf(() => new FmhaBwdWsSplitDPipeline(p));

describe('FmhaBwdWsSplitDPipeline policy', () => {
  it('d512: a cluster of 2 CTAs, each its 256 columns of K and V (32 KiB each), two Q/dO stages, the exchange buffer: fits 227 KiB', () => {
    const p = new FmhaBwdWsSplitDPipeline(policy());
    expect([p.threads, p.slices, p.clusterCtas, p.exchanges]).toEqual([384, 2, 2, 1]);
    expect(p.offsets).toEqual({
      k: 0,
      v: 32768,
      qSlice: 65536,
      doSlice: 98304,
      x: 196608,
      pT: 196608,
      dsT: 204800,
      rows: 229376,
      bars: 230400,
    });
    expect(p.sharedBytes).toBe(230400 + 8 * (1 + 6 + 2) + 1024);
    expect([p.sT.threads, p.kv.threads, p.dq.threads]).toEqual([256, 256, 256]);
  });

  it('CTAs per cluster: the slices ⌈max(d, d_v) / 256⌉ rounded up to a power of two; log2 of them exchange steps', () => {
    const shape = (headDim: number, headDimV: number) => {
      const p = new FmhaBwdWsSplitDPipeline(policy({ headDim, headDimV }));
      return [p.slices, p.clusterCtas, p.exchanges];
    };
    expect(shape(256, 256)).toEqual([1, 1, 0]);
    expect(shape(320, 320)).toEqual([2, 2, 1]);
    expect(shape(576, 512)).toEqual([3, 4, 2]);
    expect(shape(768, 768)).toEqual([3, 4, 2]);
    expect(shape(1024, 1024)).toEqual([4, 4, 2]);
    expect(new FmhaBwdWsSplitDPipeline(policy({ headDim: 1024, headDimV: 1024 })).sharedBytes).toBeLessThanOrEqual(232448);
  });

  it.each([
    [{ dtype: 'fp8' as 'fp16' }, 'dtype: must be fp16 or bf16'],
    [{ headDim: 96 }, 'headDim: must be a multiple of 64 in [64, 1024]'],
    [{ headDim: 1088 }, 'headDim: must be a multiple of 64 in [64, 1024]'],
    [{ headDimV: 576 }, 'headDimV: must be a multiple of 64 in [64, headDim 512]'],
    [{ sliceWidth: 128 }, 'sliceWidth: must be 256'],
    [{ sliceStages: 3 }, 'sliceStages: must be 1 or 2'],
    [
      { producerRegisters: 32, consumerRegisters: 240 },
      "registers: the consumers' raise above the launch's 168 must come out of the producer's release",
    ],
    [{ consumerRegisters: 240 }, "registers: the consumers' raise above the launch's 168 must come out of the producer's release"],
  ])('rejects %o: %s', (extra, rule) => {
    expect(policyErrorOf(policy(extra))).toContain(rule);
  });

  it('Pᵀ/dSᵀ: the K-major A of dV/dK (key rows) is the query-major A of dQ, element for element', () => {
    const p = new FmhaBwdWsSplitDPipeline(policy());
    const a = p.kv.aLayout.descriptor;
    const b = p.dq.aLayout.descriptor;
    for (let key = 0; key < 64; key++) for (let q = 0; q < 64; q++) expect(b.calculateOffset([q, key])).toBe(a.calculateOffset([key, q]));
  });
});
