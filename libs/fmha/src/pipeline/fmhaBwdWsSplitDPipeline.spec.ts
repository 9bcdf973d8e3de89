import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { blockGemmPolicyErrorOf } from '../testing/blockGemmPolicyErrorOf.ts';
import { splitDBwdRingSlabOf } from './fmhaBwdWsSplitDContext.ts';
import { FmhaBwdWsSplitDPipeline, type FmhaBwdWsSplitDPolicy } from './fmhaBwdWsSplitDPipeline.ts';

const policy = (extra: Partial<FmhaBwdWsSplitDPolicy> = {}): FmhaBwdWsSplitDPolicy => ({
  dtype: 'bf16',
  headDim: 512,
  headDimV: 512,
  sliceWidth: 256,
  ringSlabs: 2,
  producerRegisters: 24,
  consumerRegisters: 240,
  ...extra,
});

const policyErrorOf = (p: FmhaBwdWsSplitDPolicy): string => blockGemmPolicyErrorOf(() => new FmhaBwdWsSplitDPipeline(p));

describe('FmhaBwdWsSplitDPipeline policy', () => {
  it('d512: K and V whole (64 KiB each), Q/dO slices of 4 slabs, a 2-slot ring, Pᵀ and dSᵀ: fits 227 KiB', () => {
    const p = new FmhaBwdWsSplitDPipeline(policy());
    expect(p.threads).toBe(384);
    expect(p.slices).toBe(2);
    expect(p.offsets).toEqual({
      k: 0,
      v: 65536,
      qSlice: 131072,
      doSlice: 163840,
      ring: 196608,
      pT: 212992,
      dsT: 221184,
      rows: 229376,
      bars: 229888,
    });
    expect(p.sharedBytes).toBe(229888 + 8 * 7 + 1024);
    expect(p.sT.threads).toBe(256);
    expect(p.kv.threads).toBe(256);
    expect(p.dq.threads).toBe(256);
  });

  it('slices: ⌈max(d, d_v) / 256⌉; the padded slice of d320 is one of two', () => {
    expect(new FmhaBwdWsSplitDPipeline(policy({ headDim: 320, headDimV: 320, ringSlabs: 4 })).slices).toBe(2);
    expect(new FmhaBwdWsSplitDPipeline(policy({ headDim: 448, headDimV: 384 })).slices).toBe(2);
    expect(new FmhaBwdWsSplitDPipeline(policy({ headDim: 256, headDimV: 256 })).slices).toBe(1);
  });

  it.each([
    [{ dtype: 'fp8' as 'fp16' }, 'dtype: must be fp16 or bf16'],
    [{ headDim: 96 }, 'headDim: must be a multiple of 64 in [64, 1024]'],
    [{ headDimV: 576 }, 'headDimV: must be a multiple of 64 in [64, headDim 512]'],
    [{ sliceWidth: 128 }, 'sliceWidth: must be 256'],
    [{ ringSlabs: 5 }, 'ringSlabs: must be 1, 2, 3 or 4'],
    [{ consumerRegisters: 256 }, 'registers: producer + consumer budgets must fit the 64K-register file'],
    [{ headDim: 576, headDimV: 512 }, 'shared memory: must fit the 227 KiB an sm_90 block may use'],
    [{ headDim: 1024, headDimV: 1024 }, 'shared memory: must fit the 227 KiB an sm_90 block may use'],
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

describe('split-D ring slabs', () => {
  it('property: ring slabs j < slabs − inSlice map one-to-one onto the head-dim slabs outside [slab0, slab0 + inSlice), in order', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 16 }), fc.integer({ min: 0, max: 7 }), fc.constantFrom(4), (slabs, slice, width) => {
        const slab0 = slice * width;
        const inSlice = Math.max(Math.min(slabs - slab0, width), 0);
        const ring = Array.from({ length: slabs - inSlice }, (_, j) => splitDBwdRingSlabOf(j, slab0, inSlice));
        const outside = Array.from({ length: slabs }, (_, c) => c).filter((c) => c < slab0 || c >= slab0 + inSlice);
        expect(ring).toEqual(outside);
      }),
    );
  });
});
