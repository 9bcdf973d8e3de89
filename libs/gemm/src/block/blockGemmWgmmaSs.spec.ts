import { float32, int32, lit, sm90a, SourceBuilder, uint32 } from '@tilekit/codegen';
import { BlockEmitter, makeDistributedTensor } from '@tilekit/tile';
import { describe, expect, it } from 'vitest';
import { BlockGemmPolicyError, WgmmaBlockGemmSs } from './blockGemmWgmmaSs.ts';
import { WgmmaBlockGemmRs } from './blockGemmWgmmaRs.ts';

/** Every (thread, element) → X index of an encoding, as strings. */
function cells(enc: WgmmaBlockGemmSs['cEncoding']): string[] {
  const out: string[] = [];
  for (let t = 0; t < enc.numThreads; t++) {
    const p = enc.partitionIndexOf(t);
    for (let d = 0; d < enc.threadBufferSize; d++) out.push(`${t}:${enc.calculateXIndexFromD(p, d).join(',')}`);
  }
  return out;
}

describe('WgmmaBlockGemmSs warpgroup grids', () => {
  it('warpgroupsN = 2: warpgroup g owns columns [g·N/2, (g+1)·N/2) of the same 64 rows; each tile element has exactly one owner', () => {
    const blk = new WgmmaBlockGemmSs({ dtype: 'fp16', tileM: 64, tileN: 128, tileK: 64, aMajor: 'MN', bMajor: 'MN', warpgroupsN: 2 });
    expect(blk.threads).toBe(256);
    expect(blk.atom.n).toBe(64);
    // N-major B: the second warpgroup starts one 64-wide slab (64 K rows · 128 B) further.
    expect(blk.bWarpgroupStride).toBe(64 * 128);
    const owners = new Map<string, number>();
    const enc = blk.cEncoding;
    for (let t = 0; t < 256; t++) {
      const p = enc.partitionIndexOf(t);
      for (let d = 0; d < enc.threadBufferSize; d++) {
        const [m, n] = enc.calculateXIndexFromD(p, d);
        expect(Math.floor(n! / 64)).toBe(Math.floor(t / 128));
        owners.set(`${m},${n}`, (owners.get(`${m},${n}`) ?? 0) + 1);
      }
    }
    expect(owners.size).toBe(64 * 128);
    expect([...owners.values()].every((c) => c === 1)).toBe(true);
  });

  it('warpgroupsK = 2: both warpgroups hold the whole tile (replicas: their partial sums are added by the caller)', () => {
    const blk = new WgmmaBlockGemmSs({ dtype: 'bf16', tileM: 64, tileN: 64, tileK: 64, warpgroupsK: 2 });
    expect(blk.threads).toBe(256);
    const enc = blk.cEncoding;
    const first = cells(enc)
      .filter((c) => Number(c.split(':')[0]) < 128)
      .map((c) => c.split(':')[1]);
    const second = cells(enc)
      .filter((c) => Number(c.split(':')[0]) >= 128)
      .map((c) => c.split(':')[1]);
    expect(second).toEqual(first);
    expect(new Set(first).size).toBe(64 * 64);
  });

  it('rejects grids that do not split into whole wgmma shapes', () => {
    expect(() => new WgmmaBlockGemmSs({ dtype: 'fp16', tileM: 64, tileN: 96, tileK: 64, bMajor: 'MN', warpgroupsN: 2 })).toThrow(
      BlockGemmPolicyError,
    );
    expect(() => new WgmmaBlockGemmSs({ dtype: 'fp16', tileM: 64, tileN: 128, tileK: 64, warpgroupsN: 2, warpgroupsK: 2 })).toThrow(
      /warpgroupsK/,
    );
  });
});

describe('WgmmaBlockGemmRs warpgroupsN', () => {
  it('splits N over two warpgroups that share the 64 rows and each hold the whole A', () => {
    const blk = new WgmmaBlockGemmRs({ dtype: 'fp16', tileM: 64, tileN: 256, tileK: 64, bMajor: 'MN', warpgroupsN: 2 });
    expect(blk.threads).toBe(256);
    expect(blk.atom.n).toBe(128);
    expect(blk.bWarpgroupStride).toBe(2 * 64 * 128);
    expect(blk.accumulatorsPerThread).toBe(64);
    const a = blk.aStepEncoding;
    for (let t = 0; t < 128; t++) {
      for (let d = 0; d < a.threadBufferSize; d++)
        expect(a.calculateXIndexFromD(a.partitionIndexOf(t + 128), d)).toEqual(a.calculateXIndexFromD(a.partitionIndexOf(t), d));
    }
    expect(() => new WgmmaBlockGemmRs({ dtype: 'fp16', tileM: 128, tileN: 256, tileK: 64, bMajor: 'MN', warpgroupsN: 2 })).toThrow(
      /warpgroupsN/,
    );
  });
});

describe('WgmmaBlockGemmSs.emitMma batch', () => {
  const count = (text: string, what: string): number => text.split(what).length - 1;
  /** The wgmma.fence and commit_group calls of three K tiles issued with the given batches. */
  function fencesAndCommits(batches: readonly ('whole' | 'open' | 'inner' | 'continue')[]): { fences: number; commits: number } {
    const blk = new WgmmaBlockGemmSs({ dtype: 'bf16', tileM: 64, tileN: 64, tileK: 64 });
    const src = new SourceBuilder({ dialect: sm90a, header: 'batch probe' });
    src.function({ name: 'probe', qualifiers: sm90a.kernelQualifiers(), params: {} }, (b) => {
      const block = new BlockEmitter(b, sm90a, { numThreads: blk.threads });
      const acc = makeDistributedTensor(block, 'acc', blk.cEncoding, float32);
      block.threads((t) => {
        for (const batch of batches)
          blk.emitMma(t.b, sm90a, acc, { aTile: lit(0, uint32), bTile: lit(8192, uint32), warpgroup: lit(0, int32), batch });
      });
    });
    const body = src.render().split('void probe(')[1]!;
    return { fences: count(body, 'tk_wgmma_fence();'), commits: count(body, 'tk_wgmma_commit_group();') };
  }

  it('whole K tiles fence and commit each; a batch fences once (open) and commits once (continue)', () => {
    expect(fencesAndCommits(['whole', 'whole', 'whole'])).toEqual({ fences: 3, commits: 3 });
    expect(fencesAndCommits(['open', 'inner', 'continue'])).toEqual({ fences: 1, commits: 1 });
    expect(fencesAndCommits(['open', 'continue'])).toEqual({ fences: 1, commits: 1 });
  });
});
