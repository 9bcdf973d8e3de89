import { SourceBuilder, sm90a, uint32, float32, type BlockBuilder } from '@tilekit/codegen';
import { BlockEmitter, makeDistributedTensor } from '@tilekit/tile';
import { describe, expect, it } from 'vitest';
import { wgmmaAccumulatorAtom } from '@tilekit/tile';
import { wgmmaRegisterAFragment } from '../warp/index.ts';
import { aFragmentOfAccumulator, WgmmaBlockGemmRs } from './blockGemmWgmmaRs.ts';
import { BlockGemmPolicyError } from './blockGemmWgmmaSs.ts';

describe('WgmmaBlockGemmRs', () => {
  it('the m64nK accumulator element 8·kk + i is A-fragment element i of k step kk, for every lane and K in {16, …, 256}', () => {
    const a = wgmmaRegisterAFragment('fp16').encoding;
    for (const k of [16, 32, 64, 80, 128, 176, 256]) {
      const c = wgmmaAccumulatorAtom({ n: k }).encoding;
      for (let thread = 0; thread < 128; thread++) {
        const pc = c.partitionIndexOf(thread);
        const pa = a.partitionIndexOf(thread);
        for (let kk = 0; kk < k / 16; kk++) {
          for (let i = 0; i < 8; i++) {
            const [ra, ca] = a.calculateXIndexFromD(pa, i);
            const [rc, cc] = c.calculateXIndexFromD(pc, aFragmentOfAccumulator(kk, i));
            expect([rc, cc]).toEqual([ra, 16 * kk + ca!]);
          }
        }
      }
    }
  });

  it('reads V-like MN-major B tiles: descriptors step 16 K rows (2 KiB) per k16 and N rounds up to 64-element slabs', () => {
    const blk = new WgmmaBlockGemmRs({ dtype: 'bf16', tileM: 128, tileN: 96, tileK: 64, bMajor: 'MN' });
    expect(blk.kSteps).toBe(4);
    expect(blk.aRegisters).toBe(16);
    expect(blk.bLayout.mn).toBe(128);
    expect(blk.bOffsets).toEqual([0, 2048, 4096, 6144]);
    expect(blk.bLayout.leadingByteOffset).toBe(64 * 128);
    expect(blk.bLayout.strideByteOffset).toBe(1024);
    expect(blk.accumulatorsPerThread).toBe(48);
  });

  it('rejects shapes wgmma cannot run, naming the field', () => {
    expect(() => new WgmmaBlockGemmRs({ dtype: 'fp32', tileM: 128, tileN: 64, tileK: 64 })).toThrow(BlockGemmPolicyError);
    expect(() => new WgmmaBlockGemmRs({ dtype: 'fp16', tileM: 96, tileN: 64, tileK: 64 })).toThrow(/tileM/);
    expect(() => new WgmmaBlockGemmRs({ dtype: 'fp16', tileM: 128, tileN: 264, tileK: 64 })).toThrow(/tileN/);
    expect(() => new WgmmaBlockGemmRs({ dtype: 'fp16', tileM: 128, tileN: 64, tileK: 24 })).toThrow(/tileK/);
  });

  it('emits fence, one rs wgmma per k16 step with its 4 A registers, commit', () => {
    const blk = new WgmmaBlockGemmRs({ dtype: 'fp16', tileM: 128, tileN: 128, tileK: 32, bMajor: 'MN' });
    const src = new SourceBuilder({ dialect: sm90a });
    src.function({ name: 'k', qualifiers: sm90a.kernelQualifiers() }, (b: BlockBuilder) => {
      const block = new BlockEmitter(b, sm90a, { numThreads: blk.threads });
      const acc = makeDistributedTensor(block, 'o', blk.cEncoding, float32);
      const p = block.registers('p', uint32, blk.aRegisters);
      blk.emitMma(b, sm90a, acc, p, { bTile: b.let('v_tile', uint32, 0) });
      blk.emitWait(b, sm90a, acc, 0);
    });
    const text = src.render();
    expect(text.match(/tk_wgmma_m64n128k16_f32_f16_f16_rs_kn\(o, &p\[\d+\]/g)).toEqual([
      'tk_wgmma_m64n128k16_f32_f16_f16_rs_kn(o, &p[0]',
      'tk_wgmma_m64n128k16_f32_f16_f16_rs_kn(o, &p[4]',
    ]);
    expect(text).toContain('p, 1, 1, 1;');
    expect(text).toContain('wgmma.commit_group.sync.aligned;');
  });
});
