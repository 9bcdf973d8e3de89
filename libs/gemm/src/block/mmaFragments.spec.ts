import { float32, sm80, SourceBuilder } from '@tilekit/codegen';
import fc from 'fast-check';
import { BlockEmitter, makeDistributedTensor } from '@tilekit/tile';
import { describe, expect, it } from 'vitest';
import { BlockGemmPolicyError } from './blockGemmWgmmaSs.ts';
import { emitCToAFragment, mmaSyncARegisterEncoding, mmaSyncCEncoding, mmaSyncCToAEncoding } from './mmaFragments.ts';

const tilingArb = fc.record({
  dtype: fc.constantFrom('fp16' as const, 'bf16' as const),
  wm: fc.constantFrom(1, 2, 4),
  mRep: fc.integer({ min: 1, max: 3 }),
  nPairs: fc.integer({ min: 1, max: 4 }),
});

describe('C fragment → A fragment (register reuse between chained mma.sync GEMMs)', () => {
  it('cell by cell: element d of every thread is the same (row, col) in the C tile and the (row, k) of the A tile', () => {
    fc.assert(
      fc.property(tilingArb, ({ dtype, wm, mRep, nPairs }) => {
        const tiling = { dtype, warps: [wm, 1] as const, tileM: 16 * wm * mRep, tileN: 16 * nPairs };
        const c = mmaSyncCEncoding(tiling);
        const a = mmaSyncCToAEncoding(tiling);
        expect(a.numThreads).toBe(c.numThreads);
        expect(a.threadBufferSize).toBe(c.threadBufferSize);
        expect(a.xLengths).toEqual(c.xLengths);
        for (let thread = 0; thread < c.numThreads; thread++) {
          const pc = c.partitionIndexOf(thread);
          const pa = a.partitionIndexOf(thread);
          for (let d = 0; d < c.threadBufferSize; d++) {
            const xc = c.calculateXIndexFromD(pc, d);
            const xa = a.calculateXIndexFromD(pa, d);
            if (xc[0] !== xa[0] || xc[1] !== xa[1]) return false;
          }
        }
        return true;
      }),
    );
  });

  it('golden (PTX formulas): lane l, a_e of k16 fragment kk is c_(e mod 4) of n8 tile 2kk + ⌊e/4⌋', () => {
    const a = mmaSyncARegisterEncoding({ dtype: 'fp16', warps: [1, 1], tileM: 16, tileK: 32 });
    for (let lane = 0; lane < 32; lane++) {
      const g = lane >> 2;
      const t = lane & 3;
      for (let kk = 0; kk < 2; kk++) {
        for (let e = 0; e < 8; e++) {
          // PTX A fragment: row g + 8·((e/2) mod 2), col 2t + (e mod 2) + 8·(e/4); C tile j: row g + 8·(c/2), col 8j + 2t + (c mod 2).
          const wantA = [g + 8 * ((e >> 1) & 1), 16 * kk + 2 * t + (e & 1) + 8 * (e >> 2)];
          const c = e & 3;
          const j = 2 * kk + (e >> 2);
          const wantC = [g + 8 * (c >> 1), 8 * j + 2 * t + (c & 1)];
          expect(a.calculateXIndexFromD([0, lane], 8 * kk + e)).toEqual(wantA);
          expect(wantA).toEqual(wantC);
        }
      }
    }
  });

  it('rejects warps along N and mismatched tensors; emits a per-element round-to-nearest cast', () => {
    expect(() => mmaSyncCToAEncoding({ dtype: 'fp16', warps: [2, 2], tileM: 64, tileN: 64 })).toThrow(BlockGemmPolicyError);
    const tiling = { dtype: 'fp16' as const, warps: [4, 1] as const, tileM: 64, tileN: 32 };
    const src = new SourceBuilder({ dialect: sm80 });
    src.function({ name: 'f', qualifiers: sm80.kernelQualifiers() }, (b) => {
      const block = new BlockEmitter(b, sm80, { numThreads: 128 });
      const acc = makeDistributedTensor(block, 's', mmaSyncCEncoding(tiling), float32);
      const p = makeDistributedTensor(block, 'p', mmaSyncCToAEncoding(tiling), sm80.dtypeType('fp16'));
      block.threads((t) => emitCToAFragment(t, acc, p, tiling));
      expect(() => block.threads((t) => emitCToAFragment(t, p, p, tiling))).toThrow(/acc/);
    });
    const text = src.render();
    expect(text).toContain('p[0] = static_cast<__half>(s[0]);');
    expect(text).toContain('p[15] = static_cast<__half>(s[15]);');
  });
});
