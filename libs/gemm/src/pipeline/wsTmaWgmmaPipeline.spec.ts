import fc from 'fast-check';
import { float32, int32, pointer, sm90a, SourceBuilder, uint32, variable, type Expr } from '@tilekit/codegen';
import { makeNaiveTensorDescriptor, symbol } from '@tilekit/layout';
import { BlockEmitter, makeDistributedTensor, makeTensorView } from '@tilekit/tile';
import { describe, expect, it } from 'vitest';
import { BlockGemmPolicyError, WgmmaBlockGemmSs } from '../block/blockGemmWgmmaSs.ts';
import { makeWgmmaSmemLayout } from '../smemLayouts.ts';
import { tmaOperandLoads, WsTmaWgmmaPipeline, type WsTmaWgmmaPolicy } from './wsTmaWgmmaPipeline.ts';

const policy = (tileN: number, extra: Partial<WsTmaWgmmaPolicy> = {}): WsTmaWgmmaPolicy => ({
  dtype: 'fp16',
  tileM: 128,
  tileN,
  tileK: 64,
  stages: 4,
  producerRegisters: 40,
  consumerRegisters: 232,
  groupM: 8,
  ...extra,
});

describe('WgmmaBlockGemmSs (sm_90a block GEMM, A/B in shared memory, C in registers)', () => {
  it.each([64, 128, 256])(
    'tileN %i: the C distribution is the wgmma D fragment per warpgroup, rows offset by 64 per warpgroup',
    (tileN) => {
      const blk = new WgmmaBlockGemmSs({ dtype: 'bf16', tileM: 128, tileN, tileK: 64 });
      const atom = blk.atom.c;
      expect(blk.cEncoding.numThreads).toBe(256);
      expect(blk.cEncoding.threadBufferSize).toBe(tileN / 2);
      expect(blk.cEncoding.xLengths).toEqual([128, tileN]);
      for (const g of [0, 1]) {
        for (const w of [0, 3]) {
          for (const lane of [0, 5, 31]) {
            for (const d of [0, 1, 2, 3, tileN / 2 - 1]) {
              const [row, col] = atom.encoding.calculateXIndexFromD([w, lane], d);
              expect(blk.cEncoding.calculateXIndexFromD([g, w, lane], d)).toEqual([64 * g + row!, col]);
            }
          }
        }
      }
    },
  );

  it('descriptor start offsets: 32 bytes per k16 step inside the 128-byte swizzle row, 64 rows · 128 bytes per warpgroup', () => {
    const blk = new WgmmaBlockGemmSs({ dtype: 'fp16', tileM: 128, tileN: 256, tileK: 64 });
    expect(blk.kSteps).toBe(4);
    expect(blk.aOffsets).toEqual([
      [0, 32, 64, 96],
      [8192, 8224, 8256, 8288],
    ]);
    expect(blk.bOffsets).toEqual([0, 32, 64, 96]);
    expect(blk.aWarpgroupStride).toBe(8192);
    expect(blk.aTileBytes).toBe(128 * 64 * 2);
    expect(blk.bTileBytes).toBe(256 * 64 * 2);
    // The TMA box lands exactly in the layout the descriptors name: row r at r·128 bytes, chunk q at q ^ (r mod 8).
    const l = makeWgmmaSmemLayout({ swizzle: '128B', dtype: 'fp16', mn: 128, k: 64 });
    for (const [r, q] of [
      [0, 0],
      [3, 1],
      [13, 7],
      [127, 4],
    ] as const) {
      expect(l.descriptor.calculateOffset([r, 8 * q]) * 2).toBe(r * 128 + 16 * (q ^ (r % 8)));
    }
  });

  it.each([128, 256])('tileN %i: what wgmma reads through each descriptor is what TMA wrote there (independent byte models)', (tileN) => {
    const blk = new WgmmaBlockGemmSs({ dtype: 'bf16', tileM: 128, tileN, tileK: 64 });
    // TMA, 128B swizzle, box rows of 64 two-byte elements at a 1024-aligned base: element (r, c) at
    // r·128 + 16·((c / 8) XOR (r mod 8)) + 2·(c mod 8) — the 16-byte chunk XOR the 128-byte line index mod 8.
    const tma = (r: number, c: number): number => r * 128 + 16 * (Math.floor(c / 8) ^ (r % 8)) + 2 * (c % 8);
    // wgmma, K-major SW128 (PTX ISA 9.7.15.5.1.2): operand (i, j) at start + ⌊i/8⌋·SBO + (i mod 8)·128 + 2j,
    // then address bits [4, 7) XOR bits [7, 10).
    const wgmma = (start: number, i: number, j: number): number => {
      const u = start + Math.floor(i / 8) * 1024 + (i % 8) * 128 + 2 * j;
      return u ^ (((u >> 7) & 7) << 4);
    };
    const base = 3 * 1024 * 16; // some 1024-aligned stage address
    for (let kk = 0; kk < blk.kSteps; kk++) {
      for (let g = 0; g < blk.warpgroups; g++) {
        for (let i = 0; i < 64; i++)
          for (let j = 0; j < 16; j++)
            expect(wgmma(base + g * blk.aWarpgroupStride + blk.aOffsets[0]![kk]!, i, j)).toBe(base + tma(64 * g + i, 16 * kk + j));
      }
      for (let i = 0; i < tileN; i++)
        for (let j = 0; j < 16; j++) expect(wgmma(base + blk.bOffsets[kk]!, i, j)).toBe(base + tma(i, 16 * kk + j));
    }
  });

  it('MN-major operands: k16 steps of 2048 bytes (two 8-row K groups = 2·SBO), warpgroups one 64-wide M slab (8 KiB) apart, LBO = the slab stride', () => {
    const blk = new WgmmaBlockGemmSs({ dtype: 'fp16', tileM: 128, tileN: 256, tileK: 64, aMajor: 'MN', bMajor: 'MN' });
    expect(blk.aOffsets).toEqual([
      [0, 2048, 4096, 6144],
      [8192, 10240, 12288, 14336],
    ]);
    expect(blk.bOffsets).toEqual([0, 2048, 4096, 6144]);
    expect([
      blk.aLayout.leadingByteOffset,
      blk.aLayout.strideByteOffset,
      blk.bLayout.leadingByteOffset,
      blk.bLayout.strideByteOffset,
    ]).toEqual([8192, 1024, 8192, 1024]);
    expect(blk.atom.wrapperName).toBe('tk_wgmma_m64n256k16_f32_f16_f16_ss_mn');
    expect(new WgmmaBlockGemmSs({ dtype: 'bf16', tileM: 128, tileN: 128, tileK: 64, bMajor: 'MN' }).atom.wrapperName).toBe(
      'tk_wgmma_m64n128k16_f32_bf16_bf16_ss_kn',
    );
    expect(() => new WgmmaBlockGemmSs({ dtype: 'fp16', tileM: 128, tileN: 96, tileK: 64, bMajor: 'MN' })).toThrow(
      /tileN: must be a multiple of 64 with an N-major B/,
    );
    expect(() => new WgmmaBlockGemmSs({ dtype: 'fp16', tileM: 128, tileN: 128, tileK: 64, aMajor: 'M' as never })).toThrow(/aMajor/);
  });

  it.each([
    ['MN', 'K', 128],
    ['K', 'MN', 256],
    ['MN', 'MN', 128],
  ] as const)(
    'A %s-major, B %s-major, tileN %i: what wgmma reads through each descriptor is what the TMA loads wrote (independent byte models)',
    (aMajor, bMajor, tileN) => {
      const blk = new WgmmaBlockGemmSs({ dtype: 'bf16', tileM: 128, tileN, tileK: 64, aMajor, bMajor });
      // TMA, 128B swizzle, 1024-aligned destination: box row r (the outer box coordinate), inner
      // element c at r·128 + 16·((c / 8) XOR (r mod 8)) + 2·(c mod 8). K-major: one box, rows = M/N,
      // inner = K. MN-major: load j covers M/N [64j, 64j + 64) at j · bytesPerLoad, rows = K, inner = M/N.
      const box = (r: number, c: number): number => r * 128 + 16 * (Math.floor(c / 8) ^ (r % 8)) + 2 * (c % 8);
      const tma = (major: 'K' | 'MN', bytesPerLoad: number, mn: number, kk: number): number =>
        major === 'K' ? box(mn, kk) : Math.floor(mn / 64) * bytesPerLoad + box(kk, mn % 64);
      // wgmma (PTX ISA 9.7.15.5.1.2): K-major SW128 operand (i, j) at start + ⌊i/8⌋·SBO + (i mod 8)·128 + 2j;
      // MN-major SW128 at start + ⌊i/64⌋·LBO + 2·(i mod 64) + ⌊j/8⌋·SBO + (j mod 8)·128; then bits [4, 7) ^= bits [7, 10).
      const wgmma = (major: 'K' | 'MN', lbo: number, sbo: number, start: number, i: number, j: number): number => {
        const u =
          major === 'K'
            ? start + Math.floor(i / 8) * sbo + (i % 8) * 128 + 2 * j
            : start + Math.floor(i / 64) * lbo + 2 * (i % 64) + Math.floor(j / 8) * sbo + (j % 8) * 128;
        return u ^ (((u >> 7) & 7) << 4);
      };
      const base = 5 * 1024 * 16;
      const aLoads = tmaOperandLoads(blk.aLayout);
      const bLoads = tmaOperandLoads(blk.bLayout);
      expect(aLoads.count * aLoads.bytesPerLoad).toBe(blk.aTileBytes);
      expect(bLoads.count * bLoads.bytesPerLoad).toBe(blk.bTileBytes);
      const { leadingByteOffset: la, strideByteOffset: sa } = blk.aLayout;
      const { leadingByteOffset: lb, strideByteOffset: sb } = blk.bLayout;
      for (let kk = 0; kk < blk.kSteps; kk++) {
        for (let g = 0; g < blk.warpgroups; g++) {
          for (let i = 0; i < 64; i++)
            for (let j = 0; j < 16; j++)
              expect(wgmma(aMajor, la, sa, base + g * blk.aWarpgroupStride + blk.aOffsets[0]![kk]!, i, j)).toBe(
                base + tma(aMajor, aLoads.bytesPerLoad, 64 * g + i, 16 * kk + j),
              );
        }
        for (let i = 0; i < tileN; i++)
          for (let j = 0; j < 16; j++)
            expect(wgmma(bMajor, lb, sb, base + blk.bOffsets[kk]!, i, j)).toBe(base + tma(bMajor, bLoads.bytesPerLoad, i, 16 * kk + j));
      }
    },
  );

  it('tmaOperandLoads: one [tileK, tileMN] box for K-major, tileMN/64 boxes [64, tileK] of 8 KiB for MN-major', () => {
    const l = (mn: number, major: 'K' | 'MN') => makeWgmmaSmemLayout({ swizzle: '128B', dtype: 'fp16', mn, k: 64, major });
    expect(tmaOperandLoads(l(256, 'K'))).toEqual({ major: 'K', box: [64, 256], count: 1, bytesPerLoad: 32768, mnStep: 0 });
    expect(tmaOperandLoads(l(256, 'MN'))).toEqual({ major: 'MN', box: [64, 64], count: 4, bytesPerLoad: 8192, mnStep: 64 });
    expect(tmaOperandLoads(l(64, 'MN'))).toEqual({ major: 'MN', box: [64, 64], count: 1, bytesPerLoad: 8192, mnStep: 0 });
    expect(() => tmaOperandLoads(makeWgmmaSmemLayout({ swizzle: '64B', dtype: 'fp16', mn: 64, k: 64 }))).toThrow(/128B swizzle/);
  });

  it('rejects shapes it cannot do, naming the field', () => {
    expect(() => new WgmmaBlockGemmSs({ dtype: 'fp32', tileM: 128, tileN: 128, tileK: 64 })).toThrow(/dtype.*fp16 or bf16/);
    expect(() => new WgmmaBlockGemmSs({ dtype: 'fp16', tileM: 96, tileN: 128, tileK: 64 })).toThrow(BlockGemmPolicyError);
    expect(() => new WgmmaBlockGemmSs({ dtype: 'fp16', tileM: 128, tileN: 264, tileK: 64 })).toThrow(/tileN/);
    expect(() => new WgmmaBlockGemmSs({ dtype: 'fp16', tileM: 128, tileN: 128, tileK: 32 })).toThrow(/tileK/);
  });

  it('emits one K tile: fence, tileK/16 wgmma from descriptors (scale-d of the first one given), commit; operands pinned (snapshot)', () => {
    const blk = new WgmmaBlockGemmSs({ dtype: 'fp16', tileM: 128, tileN: 128, tileK: 64 });
    const src = new SourceBuilder({ dialect: sm90a, header: 'block gemm step' });
    src.function({ name: 'step', qualifiers: sm90a.kernelQualifiers(), params: { a: uint32, b: uint32, first: int32 } }, (b, p) => {
      const block = new BlockEmitter(b, sm90a, { numThreads: 256 });
      const acc = makeDistributedTensor(block, 'acc', blk.cEncoding, float32);
      const wg = b.let('wg', int32, variable('warpgroup_id', int32));
      blk.emitMma(b, sm90a, acc, { aTile: p.a, bTile: p.b, warpgroup: wg, accumulate: p.first as Expr });
      blk.emitWait(b, sm90a, acc, 1);
    });
    const text = src.render();
    expect(text.match(/tk_wgmma_m64n128k16_f32_f16_f16_ss_kk\(acc/g)).toHaveLength(4);
    expect(text).toContain(
      'tk_wgmma_m64n128k16_f32_f16_f16_ss_kk(acc, tk_wgmma_desc_encode(a_wg, 16u, 1024u, 0u, 1u), tk_wgmma_desc_encode(b, 16u, 1024u, 0u, 1u), first);',
    );
    expect(text).toContain('tk_wgmma_desc_encode(a_wg + 96u, 16u, 1024u, 0u, 1u), tk_wgmma_desc_encode(b + 96u, 16u, 1024u, 0u, 1u), 1);');
    expect(text.slice(text.indexOf('void step('))).toMatchSnapshot();
  });
});

describe('WsTmaWgmmaPipeline (warp-specialized TMA + mbarrier + wgmma main loop)', () => {
  it('shared memory: A stages, B stages, full and empty barriers; +1024 alignment slack; fits the 227 KB opt-in limit', () => {
    const p = new WsTmaWgmmaPipeline(policy(256));
    expect(p.threads).toBe(384);
    expect(p.bStageOffset).toBe(4 * 16384);
    expect(p.barrierOffset).toBe(4 * 16384 + 4 * 32768);
    expect(p.usedBytes).toBe(p.barrierOffset + 64);
    expect(p.sharedBytes).toBe(p.usedBytes + 1024);
    expect(p.sharedBytes).toBeLessThanOrEqual(227 * 1024);
    expect(p.stageTxBytes).toBe(16384 + 32768);
  });

  it.each([
    [1, 1],
    [257, 511],
    [8192, 8192],
    [1000, 3000],
    [4097, 4095],
  ])('grouped rasterization of %i x %i visits every tile exactly once', (m, n) => {
    const p = new WsTmaWgmmaPipeline(policy(128));
    const seen = new Set<string>();
    const grid = p.gridSize(m, n);
    for (let pid = 0; pid < grid; pid++) {
      const [tm, tn] = p.tileOf(pid, m, n);
      expect(tm).toBeLessThan(Math.ceil(m / 128));
      expect(tn).toBeLessThan(Math.ceil(n / 128));
      seen.add(`${tm},${tn}`);
    }
    expect(seen.size).toBe(grid);
  });

  it('rejects bad stages and register budgets', () => {
    expect(() => new WsTmaWgmmaPipeline(policy(128, { stages: 3 }))).toThrow(/stages/);
    expect(() => new WsTmaWgmmaPipeline(policy(128, { consumerRegisters: 250 }))).toThrow(/consumerRegisters|64K/);
    // 384 threads launch with 168 registers each: the consumers' raise to 248 needs more than a producer at 56 gives back.
    expect(() => new WsTmaWgmmaPipeline(policy(128, { consumerRegisters: 248, producerRegisters: 56 }))).toThrow(
      /\(168 − 56\)·128 ≥ \(248 − 168\)·256/,
    );
    // 32/240 passed the old 64K-register check and hung on an H200.
    expect(() => new WsTmaWgmmaPipeline(policy(128, { consumerRegisters: 240, producerRegisters: 32 }))).toThrow(/producer's release/);
  });

  it('emits producer and consumer roles as the two sides of one branch, with setmaxnreg, TMA, mbarriers and the predicated epilogue', () => {
    const pipe = new WsTmaWgmmaPipeline(policy(128));
    const src = new SourceBuilder({ dialect: sm90a });
    const m = symbol('m', { max: 1 << 20 });
    const n = symbol('n', { max: 1 << 20, multipleOf: 2 });
    const ldc = symbol('ldc', { max: 1 << 20, multipleOf: 2 });
    const desc = makeNaiveTensorDescriptor([m, n], [ldc, 1], { vectorLength: 2 });
    const half = sm90a.dtypeType('fp16');
    src.function(
      {
        name: 'gemm_body',
        qualifiers: sm90a.kernelQualifiers(),
        params: { c: pointer(half), m: int32, n: int32, k: int32, ldc: int32, a_map: pointer(uint32), b_map: pointer(uint32) },
      },
      (b, p) => {
        pipe.emit(b, sm90a, {
          aMap: p.a_map,
          bMap: p.b_map,
          m: p.m,
          n: p.n,
          k: p.k,
          c: makeTensorView(p.c, desc, { elementBytes: 2 }),
          symbols: { m: p.m, n: p.n, ldc: p.ldc },
        });
      },
    );
    const text = src.render();
    expect(text).toMatch(/if \(tid >= 256\) \{[\s\S]*tk_setmaxnreg_dec<40>\(\);[\s\S]*\} else \{[\s\S]*tk_setmaxnreg_inc<232>\(\);/);
    expect(text).toContain('tk_mbarrier_wait_parity(empty_bar + s, parity ^ 1u);');
    expect(text).toContain('tk_mbarrier_arrive_expect_tx(full_bar + s, 32768u);');
    expect(text.match(/tk_tma_load_2d\(/g)?.length).toBeGreaterThanOrEqual(2);
    expect(text).toContain('tk_mbarrier_wait_parity(full_bar + s, parity);');
    expect(text).toContain('tk_wgmma_wait_group_1();');
    expect(text).toContain('tk_mbarrier_arrive_warp(empty_bar + ((kt - 1) & 3));');
    expect(text).toMatch(/if \(inside\w*\) \{/);
    expect(text).not.toContain('acc[0] = 0');
  });

  it('MN-major operands: one TMA load per 64-wide slab at [mn0 + 64j, k0] into the stage + 8 KiB·j, descriptors with LBO 8192, the transposing wgmma', () => {
    const pipe = new WsTmaWgmmaPipeline(policy(256, { aMajor: 'MN', bMajor: 'MN' }));
    expect([pipe.aLoads.count, pipe.bLoads.count, pipe.stageTxBytes]).toEqual([2, 4, 16384 + 32768]);
    const src = new SourceBuilder({ dialect: sm90a });
    const m = symbol('m', { max: 1 << 20 });
    const n = symbol('n', { max: 1 << 20, multipleOf: 2 });
    const ldc = symbol('ldc', { max: 1 << 20, multipleOf: 2 });
    const desc = makeNaiveTensorDescriptor([m, n], [ldc, 1], { vectorLength: 2 });
    src.function(
      {
        name: 'gemm_body',
        qualifiers: sm90a.kernelQualifiers(),
        params: {
          c: pointer(sm90a.dtypeType('fp16')),
          m: int32,
          n: int32,
          k: int32,
          ldc: int32,
          a_map: pointer(uint32),
          b_map: pointer(uint32),
        },
      },
      (b, p) => {
        pipe.emit(b, sm90a, {
          aMap: p.a_map,
          bMap: p.b_map,
          m: p.m,
          n: p.n,
          k: p.k,
          c: makeTensorView(p.c, desc, { elementBytes: 2 }),
          symbols: { m: p.m, n: p.n, ldc: p.ldc },
        });
      },
    );
    const text = src.render();
    expect(text.match(/tk_tma_load_2d\(/g)).toHaveLength(6 + 1); // 6 calls + the leaf's definition
    expect(text).toContain('tk_tma_load_2d(smem + s * 16384, a_map, full_bar + s, m0, k0);');
    expect(text).toContain('tk_tma_load_2d(smem + (s * 16384 + 8192), a_map, full_bar + s, m0 + 64, k0);');
    expect(text).toContain('tk_tma_load_2d(smem + (s * 32768 + 65536), b_map, full_bar + s, n0, k0);');
    expect(text).toContain('tk_tma_load_2d(smem + (s * 32768 + 90112), b_map, full_bar + s, n0 + 192, k0);');
    expect(text).toContain(
      'tk_wgmma_m64n256k16_f32_f16_f16_ss_mn(acc, tk_wgmma_desc_encode(a_wg + 2048u, 8192u, ' +
        '1024u, 0u, 1u), tk_wgmma_desc_encode(b_tile + 2048u, 8192u, 1024u, 0u, 1u), 1);',
    );
    expect(text).toContain('p, 1, 1, 1, 1;');
  });

  it('persistent schedule (the TS twin of the emitted tile loop): over all blocks every tile exactly once, each block in increasing tile order', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5000 }),
        fc.integer({ min: 1, max: 5000 }),
        fc.integer({ min: 1, max: 200 }),
        fc.integer({ min: 1, max: 16 }),
        (m, n, sms, groupM) => {
          const p = new WsTmaWgmmaPipeline(policy(256, { persistent: true, groupM }));
          const blocks = p.persistentGridSize(m, n, sms);
          expect(blocks).toBe(Math.min(sms, p.gridSize(m, n)));
          const seen = new Map<string, number>();
          for (let x = 0; x < blocks; x++) {
            const mine = p.persistentTiles(x, blocks, m, n);
            expect(mine.length).toBeGreaterThan(0); // no idle block
            for (const [tm, tn] of mine) {
              expect(tm).toBeLessThan(Math.ceil(m / 128));
              expect(tn).toBeLessThan(Math.ceil(n / 256));
              seen.set(`${tm},${tn}`, (seen.get(`${tm},${tn}`) ?? 0) + 1);
            }
          }
          expect(seen.size).toBe(p.gridSize(m, n));
          expect([...seen.values()].every((c) => c === 1)).toBe(true);
        },
      ),
    );
    const p = new WsTmaWgmmaPipeline(policy(256, { persistent: true }));
    expect(p.persistentGridSize(8192, 8192, 132)).toBe(132);
    expect(p.persistentGridSize(4096, 4096, 132, 4)).toBe(33);
    expect(p.persistentGridSize(128, 256, 132, 300)).toBe(1);
    expect(() => p.persistentGridSize(128, 128, 0)).toThrow(/sms/);
    expect(() => new WsTmaWgmmaPipeline(policy(256, { persistent: 1 as never }))).toThrow(/persistent: must be a boolean/);
  });

  it('persistent ring: the emitted waits and releases (ring step = K tiles of earlier tiles + kt) run every tile sequence to the end, each stage refilled only after its release', () => {
    // A model of the emitted protocol with S stages: the producer fills step g after waiting for
    // the release of step g − S; the consumers wait for step g to be full, release step g − 1 after
    // K tile kt > 0 of a tile, and the tile's last step after its loop. Any interleaving allowed by
    // the barriers must finish; here the producer runs as far ahead as the ring lets it.
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 9 }), fc.constantFrom(2, 4, 8), (tiles, kTiles, stages) => {
        const total = tiles * kTiles;
        const released = new Array<number>(total).fill(0);
        let filled = 0; // steps [0, filled) are full
        let consumed = 0;
        const release = (g: number): void => {
          released[g]! += 1;
        };
        let guard = 0;
        while (consumed < total) {
          if (guard++ > 10 * total + 100) throw new Error('deadlock');
          // Producer: fill while the stage's previous use was released.
          while (filled < total && (filled < stages || released[filled - stages] === 1)) filled++;
          if (consumed >= filled) throw new Error(`deadlock at step ${consumed}`);
          const kt = consumed % kTiles;
          if (kt > 0) release(consumed - 1);
          if (kt === kTiles - 1) release(consumed); // after wait_group 0, before the epilogue
          consumed++;
        }
        expect(released.every((r) => r === 1)).toBe(true);
      }),
    );
  });

  it('persistent: producer and consumers loop over the same tiles with the ring step carried across them; the last stage of a tile is released before its epilogue', () => {
    const pipe = new WsTmaWgmmaPipeline(policy(256, { persistent: true }));
    const src = new SourceBuilder({ dialect: sm90a });
    const m = symbol('m', { max: 1 << 20 });
    const n = symbol('n', { max: 1 << 20, multipleOf: 2 });
    const ldc = symbol('ldc', { max: 1 << 20, multipleOf: 2 });
    const desc = makeNaiveTensorDescriptor([m, n], [ldc, 1], { vectorLength: 2 });
    src.function(
      {
        name: 'gemm_body',
        qualifiers: sm90a.kernelQualifiers(),
        params: {
          c: pointer(sm90a.dtypeType('fp16')),
          m: int32,
          n: int32,
          k: int32,
          ldc: int32,
          a_map: pointer(uint32),
          b_map: pointer(uint32),
        },
      },
      (b, p) => {
        pipe.emit(b, sm90a, {
          aMap: p.a_map,
          bMap: p.b_map,
          m: p.m,
          n: p.n,
          k: p.k,
          c: makeTensorView(p.c, desc, { elementBytes: 2 }),
          symbols: { m: p.m, n: p.n, ldc: p.ldc },
        });
      },
    );
    const text = src.render();
    const loops = text.match(
      /for \(int tile = static_cast<int>\(blockIdx\.x\); tile < total_tiles; tile \+= static_cast<int>\(gridDim\.x\)\) \{/g,
    );
    expect(loops).toHaveLength(2);
    expect(text.match(/done \+= k_tiles;/g)).toHaveLength(2);
    expect(text.match(/const int step = done \+ kt;/g)).toHaveLength(2);
    expect(text).toContain('tk_mbarrier_wait_parity(empty_bar + s, parity ^ 1u);');
    expect(text).toContain('tk_mbarrier_arrive_warp(empty_bar + ((step - 1) & 3));');
    const release = text.indexOf('tk_mbarrier_arrive_warp(empty_bar + ((done + k_tiles - 1) & 3));');
    expect(release).toBeGreaterThan(text.indexOf('tk_wgmma_wait_group_0();'));
    expect(release).toBeLessThan(text.indexOf('// epilogue: fp32 accumulator'));
    expect(text).not.toContain('const int pid');
  });
});
