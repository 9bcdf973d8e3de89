import { describe, expect, it } from 'vitest';
import { dsaSparseMlaChainSmem, DSA_SPARSE_MLA_CHAIN_HALVES, DSA_SPARSE_MLA_CHAIN_SLAB_BYTES } from './dsaSparseMlaChainSmem.ts';
import { DSA_SPARSE_MLA_SLABS } from './dsaSparseMlaSmem.ts';

/** Hopper's opt-in shared memory per block (227 KiB). */
const SM90_MAX_DYNAMIC_SMEM = 232448;

describe('dsaSparseMlaChainSmem', () => {
  const l = dsaSparseMlaChainSmem();
  const regions: [string, number, number][] = [
    ['q', l.q, l.keys],
    ['key buffers', l.keys, l.keys + 2 * l.stageBytes],
    ['peer P', l.peerP, l.peerP + DSA_SPARSE_MLA_CHAIN_SLAB_BYTES],
    ['valid', l.valid, l.valid + 2 * 64],
    ['row max', l.rowMax, l.rowMax + 64 * 4],
    ['ring barriers', l.barriers, l.barriers + 8 * 8],
    ['hand-offs', l.handoffs, l.handoffs + 4 * 8],
  ];

  it('lays the regions out back to back without overlap, ending at `used`, within the 227 KiB opt-in with the alignment slack', () => {
    for (let i = 1; i < regions.length; i++) expect(regions[i]![1]).toBe(regions[i - 1]![2]);
    expect(regions.at(-1)![2]).toBe(l.used);
    expect(l.used + 1024).toBeLessThanOrEqual(SM90_MAX_DYNAMIC_SMEM);
  });

  it('keeps every wgmma tile 1024-aligned (128B swizzle atoms) and the barriers 8-aligned', () => {
    for (let b = 0; b < 2; b++)
      for (let c = 0; c < DSA_SPARSE_MLA_SLABS; c++)
        expect((l.keys + b * l.stageBytes + c * DSA_SPARSE_MLA_CHAIN_SLAB_BYTES) % 1024).toBe(0);
    expect(l.q % 1024).toBe(0);
    expect(l.peerP % 1024).toBe(0);
    expect(l.barriers % 8).toBe(0);
    expect(l.handoffs % 8).toBe(0);
  });

  it('aliases the row-sum join to Q (read only by Q·Kᵀ, all waited for before the epilogue) and splits a buffer into slabs 0–3 and 4–8', () => {
    expect(l.rowSum).toBe(l.q);
    expect(2 * 2 * 128 * 4).toBeLessThanOrEqual(l.keys - l.q);
    expect(DSA_SPARSE_MLA_CHAIN_HALVES).toEqual([
      [0, 4],
      [4, DSA_SPARSE_MLA_SLABS],
    ]);
  });
});
