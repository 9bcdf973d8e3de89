import { float32, int32, sm80, sm90a, SourceBuilder, pointer, uint8, variable, type CType, type Expr } from '@tilekit/codegen';
import fc from 'fast-check';
import { BlockEmitter, makeDistributedTensor, mmaSyncAtoms, type TileDistributionEncoding } from '@tilekit/tile';
import { describe, expect, it } from 'vitest';
import { MmaSyncBlockGemmRs, MmaSyncBlockGemmSs, type LdmatrixOperandPlan, type MmaSyncBlockGemmPolicy } from './blockGemmMmaSync.ts';
import { BlockGemmPolicyError } from './blockGemmWgmmaSs.ts';
import { mmaSyncCEncoding } from './mmaFragments.ts';

const policyArb = fc
  .record({
    dtype: fc.constantFrom('fp16' as const, 'bf16' as const),
    wm: fc.constantFrom(1, 2, 4),
    wn: fc.constantFrom(1, 2, 4),
    mRep: fc.integer({ min: 1, max: 4 }),
    nPairs: fc.integer({ min: 1, max: 2 }),
    tileK: fc.constantFrom(16, 32, 64, 128),
    aMajor: fc.constantFrom('K' as const, 'MN' as const),
    bMajor: fc.constantFrom('K' as const, 'MN' as const),
  })
  .filter(({ wm, mRep, wn, nPairs }) => [16 * wm * mRep, 16 * wn * nPairs].every((x) => x === 16 || x === 32 || x % 64 === 0))
  .map(({ dtype, wm, wn, mRep, nPairs, tileK, aMajor, bMajor }): MmaSyncBlockGemmPolicy => ({
    dtype,
    warps: [wm, wn],
    tileM: 16 * wm * mRep,
    tileN: 16 * wn * nPairs,
    tileK,
    aMajor,
    bMajor,
  }));

/**
 * An independent model of `ldmatrix.x4` on a byte-addressed tile (PTX ISA 9.7.14.5.15): lanes
 * 8r..8r+7 give the 8 row addresses of matrix r; each row is 16 contiguous bytes (8 elements).
 * Without .trans lane l's register r holds elements 2(l mod 4), +1 of row l/4; with .trans it holds
 * element l/4 of rows 2(l mod 4) and 2(l mod 4) + 1. Returns the (mn, k) tile coordinates of what
 * register r, half h of every lane holds, decoding byte addresses through the layout's inverse.
 */
function simulateLdmatrix(plan: LdmatrixOperandPlan, rowAddress: (lane: number) => number): [number, number][][][] {
  const inverse = new Map<number, [number, number]>();
  const l = plan.layout;
  for (let mn = 0; mn < l.mn; mn++) for (let k = 0; k < l.k; k++) inverse.set(l.descriptor.calculateOffset([mn, k]) * 2, [mn, k]);
  const element = (address: number): [number, number] => {
    const x = inverse.get(address);
    if (x === undefined) throw new Error(`address ${address} is outside the tile`);
    return x;
  };
  const trans = plan.atom.trans;
  return Array.from({ length: 32 }, (_, lane) =>
    Array.from({ length: 4 }, (_, r) =>
      Array.from({ length: 2 }, (_, h) => {
        const g = lane >> 2;
        const t = lane & 3;
        return trans ? element(rowAddress(8 * r + 2 * t + h) + 2 * g) : element(rowAddress(8 * r + g) + 2 * (2 * t + h));
      }),
    ),
  );
}

describe('MmaSyncBlockGemmSs: ldmatrix from the XOR-swizzled tiles feeds exactly the mma.sync fragments', () => {
  it('every register of every ldmatrix.x4 (emitted address formula, independent ldmatrix model) holds the A / B fragment element mma.sync expects', () => {
    fc.assert(
      fc.property(policyArb, (policy) => {
        const blk = new MmaSyncBlockGemmSs(policy);
        const frags = mmaSyncAtoms('m16n8k16', policy.dtype);
        const [wmCount, wnCount] = policy.warps;
        for (const [plan, warps] of [
          [blk.aPlan, wmCount],
          [blk.bPlan, wnCount],
        ] as const) {
          for (let w = 0; w < warps; w++) {
            for (const load of plan.loads) {
              // What the emitted code computes: (lane base + add) ^ xor, the lane base being the layout offset of its row.
              const got = simulateLdmatrix(plan, (lane) => {
                const [mn, k] = plan.laneCoordinate(lane);
                return (plan.byteOffset(16 * w + mn, k) + load.add) ^ load.xor;
              });
              for (let lane = 0; lane < 32; lane++) {
                for (let r = 0; r < 4; r++) {
                  for (let h = 0; h < 2; h++) {
                    let want: number[];
                    if (plan.operand === 'A') {
                      const [m, k] = frags.a.elementXIndex(lane, 2 * r + h);
                      want = [(load.q * wmCount + w) * 16 + m!, 16 * load.kk + k!];
                    } else {
                      const [k, n] = frags.b.elementXIndex(lane, 2 * (r & 1) + h);
                      want = [(load.q * wnCount + w) * 16 + 8 * (r >> 1) + n!, 16 * load.kk + k!];
                    }
                    if (got[lane]![r]![h]![0] !== want[0] || got[lane]![r]![h]![1] !== want[1]) return false;
                  }
                }
              }
            }
          }
        }
        return true;
      }),
      { numRuns: 40 },
    );
  });

  it('the accumulator: tile (i, j) of warp (wm, wn) is the mma C fragment at rows (i·WM + wm)·16, cols (⌊j/2⌋·WN + wn)·16 + 8·(j mod 2), d = 4·(i·nRep + j) + c', () => {
    fc.assert(
      fc.property(policyArb, (policy) => {
        const blk = new MmaSyncBlockGemmSs(policy);
        const c = mmaSyncAtoms('m16n8k16', policy.dtype).c;
        const [wmCount, wnCount] = policy.warps;
        for (let warp = 0; warp < wmCount * wnCount; warp++) {
          const wm = Math.floor(warp / wnCount);
          const wn = warp % wnCount;
          for (const lane of [0, 7, 13, 31]) {
            for (let i = 0; i < blk.mRepeats; i++) {
              for (let j = 0; j < blk.nRepeats; j++) {
                for (let e = 0; e < 4; e++) {
                  const [r, col] = c.elementXIndex(lane, e);
                  const got = blk.cEncoding.calculateXIndexFromD(
                    blk.cEncoding.partitionIndexOf(32 * warp + lane),
                    blk.accumulatorOffset(i, j) + e,
                  );
                  if (got[0] !== (i * wmCount + wm) * 16 + r! || got[1] !== (Math.floor(j / 2) * wnCount + wn) * 16 + 8 * (j % 2) + col!)
                    return false;
                }
              }
            }
          }
        }
        return true;
      }),
      { numRuns: 40 },
    );
  });

  it('golden: 128×128×32, 2×4 warps, A K-major (64B swizzle): k16 steps XOR 32 bytes, M repeats add 32 rows · 64 bytes', () => {
    const blk = new MmaSyncBlockGemmSs({ dtype: 'fp16', tileM: 128, tileN: 128, tileK: 32, warps: [2, 4], aMajor: 'K', bMajor: 'K' });
    expect([blk.mRepeats, blk.nRepeats, blk.kSteps, blk.threads, blk.accumulatorsPerThread]).toEqual([4, 4, 2, 256, 64]);
    expect(blk.aLayout.swizzle).toBe('64B');
    expect(blk.aPlan.loads.map((l) => [l.q, l.kk, l.add, l.xor])).toEqual([
      [0, 0, 0, 0],
      [1, 0, 2048, 0],
      [2, 0, 4096, 0],
      [3, 0, 6144, 0],
      [0, 1, 0, 32],
      [1, 1, 2048, 32],
      [2, 1, 4096, 32],
      [3, 1, 6144, 32],
    ]);
    // Lane 17 addresses row 1 of matrix 2: A (m 0..7, k 8..15) → (1, 8); B K-major (n 8..15, k 0..7) → (9, 0).
    expect(blk.aPlan.laneCoordinate(17)).toEqual([1, 8]);
    expect(blk.bPlan.laneCoordinate(17)).toEqual([9, 0]);
  });

  it('rejects policies it cannot tile, naming the field', () => {
    const ok: MmaSyncBlockGemmPolicy = { dtype: 'fp16', tileM: 128, tileN: 128, tileK: 32, warps: [2, 4], aMajor: 'K', bMajor: 'K' };
    expect(() => new MmaSyncBlockGemmSs({ ...ok, dtype: 'fp32' })).toThrow(/dtype.*fp16 or bf16/);
    expect(() => new MmaSyncBlockGemmSs({ ...ok, tileM: 80 })).toThrow(BlockGemmPolicyError);
    expect(() => new MmaSyncBlockGemmSs({ ...ok, tileN: 72 })).toThrow(/tileN/);
    expect(() => new MmaSyncBlockGemmSs({ ...ok, tileK: 24 })).toThrow(/tileK/);
    expect(() => new MmaSyncBlockGemmSs({ ...ok, warps: [3, 2] })).toThrow(/power of two/);
    expect(() => new MmaSyncBlockGemmSs({ ...ok, tileK: 48 })).toThrow(/contiguous extent/);
  });
});

function emitStep(
  target: typeof sm80,
  threads: number,
  fill: (b: Parameters<Parameters<SourceBuilder['function']>[1]>[0], block: BlockEmitter, p: Record<string, Expr>) => void,
): string {
  const src = new SourceBuilder({ dialect: target, header: 'block gemm step' });
  src.function(
    { name: 'step', qualifiers: target.kernelQualifiers(), params: { a_tile: pointer(uint8), b_tile: pointer(uint8) } },
    (b, p) => {
      const block = new BlockEmitter(b, target, { numThreads: threads });
      fill(b, block, p);
    },
  );
  return src.render();
}

describe('emitted code (snapshots)', () => {
  it('SS: per k16 step 4 A + 2 B ldmatrix.x4 and 16 mma.sync; addresses are lane base + add, XOR chunk bits', () => {
    const blk = new MmaSyncBlockGemmSs({ dtype: 'fp16', tileM: 128, tileN: 128, tileK: 32, warps: [2, 4], aMajor: 'K', bMajor: 'MN' });
    const text = emitStep(sm80, 256, (b, block, p) => {
      const acc = makeDistributedTensor(block, 'acc', blk.cEncoding, float32);
      const state = blk.emitSetup(b, block.indexEmitter, variable('tid', int32));
      blk.emitMma(b, sm80, acc, state, { aTile: p['a_tile']!, bTile: p['b_tile']! });
    });
    expect(text.match(/tk_ldmatrix_x4\(/g)).toHaveLength(2 * 4 + 1);
    expect(text.match(/tk_ldmatrix_x4_trans\(/g)).toHaveLength(2 * 2 + 1);
    expect(text.match(/tk_mma_m16n8k16_f32_f16_f16_f32\(&acc/g)).toHaveLength(2 * 16);
    expect(text).toContain('tk_ldmatrix_x4(&a_frag[4], a_tile + (a_lane + 2048));');
    expect(text).toContain('tk_ldmatrix_x4(&a_frag[4], a_tile + ((a_lane + 2048) ^ 32));');
    expect(text.slice(text.indexOf('void step('))).toMatchSnapshot();
  });

  it('RS: A packed from a distributed tensor in the A-fragment distribution, B from shared memory', () => {
    const blk = new MmaSyncBlockGemmRs({ dtype: 'bf16', tileM: 64, tileN: 64, tileK: 32, warps: [4, 1], bMajor: 'MN' });
    const text = emitStep(sm90a, 128, (b, block, p) => {
      const acc = makeDistributedTensor(block, 'acc', blk.cEncoding, float32);
      const a = makeDistributedTensor(block, 'p', blk.aEncoding, float32);
      const state = blk.emitSetup(b, block.indexEmitter, variable('tid', int32));
      blk.emitMma(b, sm90a, acc, state, { a, bTile: p['b_tile']! });
    });
    // fp32 pairs rounded and packed by codegen's packFloat2 (one cvt.rn.bf16x2.f32 each).
    expect(text).toContain('cvt.rn.bf16x2.f32');
    expect(text).toContain('a_frag[0] = tk_pack_bf16x2(p[0], p[1]);');
    expect(text).toContain('a_frag[3] = tk_pack_bf16x2(p[14], p[15]);');
    expect(text.match(/tk_mma_m16n8k16_f32_bf16_bf16_f32\(&acc/g)).toHaveLength(2 * 8);
    expect(text.slice(text.indexOf('void step('))).toMatchSnapshot();
  });

  it('RS: A may also be the 16-bit input type (widened exactly, then packed) or, fp32 with warps only along M, an accumulator in its C distribution; anything else is refused', () => {
    const blk = new MmaSyncBlockGemmRs({ dtype: 'fp16', tileM: 64, tileN: 64, tileK: 32, warps: [4, 1], bMajor: 'MN' });
    const emitWith = (aEnc: TileDistributionEncoding, type: CType): string =>
      emitStep(sm80, 128, (b, block, p) => {
        const acc = makeDistributedTensor(block, 'acc', blk.cEncoding, float32);
        const a = makeDistributedTensor(block, 'p', aEnc, type);
        blk.emitMma(b, sm80, acc, blk.emitSetup(b, block.indexEmitter, variable('tid', int32)), { a, bTile: p['b_tile']! });
      });
    const half = emitWith(blk.aEncoding, sm80.dtypeType('fp16'));
    expect(half).toContain('a_frag[0] = tk_pack_f16x2(static_cast<float>(p[0]), static_cast<float>(p[1]));');
    expect(half).toContain('cvt.rn.f16x2.f32');
    // The accumulator of a 64×32 S tile is A fragment-for-fragment: the same calls as with the A distribution.
    const sAcc = mmaSyncCEncoding({ dtype: 'fp16', warps: [4, 1], tileM: 64, tileN: 32 });
    expect(blk.aAsAccumulatorEncoding?.equals(sAcc)).toBe(true);
    const viaC = emitWith(sAcc, float32);
    const viaA = emitWith(blk.aEncoding, float32);
    expect(viaC.slice(viaC.indexOf('a_frag[0] ='))).toBe(viaA.slice(viaA.indexOf('a_frag[0] =')));
    expect(() => emitWith(sAcc, sm80.dtypeType('fp16'))).toThrow(/A-fragment distribution/);
    expect(() => emitWith(blk.aEncoding, sm80.dtypeType('bf16'))).toThrow(/must be fp32 or fp16/);
    expect(
      new MmaSyncBlockGemmRs({ dtype: 'fp16', tileM: 64, tileN: 64, tileK: 32, warps: [2, 2], bMajor: 'MN' }).aAsAccumulatorEncoding,
    ).toBeUndefined();
  });
});
