import { describe, expect, it } from 'vitest';
import { bijectionModuloRViolation } from '../testing/bruteForce.ts';
import { fragmentTableViolation, type FragmentCell } from '../testing/fragmentTables.ts';
import { mmaSyncAtoms } from './mmaSync.ts';
import { wgmmaAccumulatorAtom } from './wgmma.ts';

// PTX ISA 9.7.15.5.1.1.1, Figure 149 (WGMMA .m64nNk16 accumulator D; N/2 .f32 registers d0..): warp w of
// the warpgroup owns rows 16w..16w+15; in it the m16n8 C pattern repeats every 8 columns. The same
// map, as CUTLASS's CLayout_64xN ((4,8,4),(2,2,N/8)):((128,1,16),(64,8,512)) over a column-major 64×N:
//   row = 16·warp + groupID + 8·((i / 2) mod 2), col = 8·⌊i / 4⌋ + 2·threadID_in_group + (i mod 2).
const d: FragmentCell = (thread, i) => {
  const warp = thread >> 5;
  const lane = thread & 31;
  return [16 * warp + (lane >> 2) + 8 * ((i >> 1) & 1), 8 * (i >> 2) + 2 * (lane % 4) + (i & 1)];
};

/** The CUTLASS layout evaluated literally: offset = Σ coord·stride, then (m, n) = (offset mod 64, ⌊offset / 64⌋). */
function cutlassCLayout(thread: number, i: number): [number, number] {
  const [t0, t1, t2] = [thread % 4, (thread >> 2) % 8, thread >> 5];
  const [v0, v1, v2] = [i % 2, (i >> 1) % 2, i >> 2];
  const offset = 128 * t0 + 1 * t1 + 16 * t2 + 64 * v0 + 8 * v1 + 512 * v2;
  return [offset % 64, Math.floor(offset / 64)];
}

describe('wgmma m64nNk16 accumulator matches the PTX ISA cell by cell', () => {
  it('every N = 8, 16, …, 256: 128 threads × N/2 elements', () => {
    for (let n = 8; n <= 256; n += 8) {
      const atom = wgmmaAccumulatorAtom({ n });
      expect(atom.shape).toEqual([64, n]);
      expect(atom.threads).toBe(128);
      expect(atom.elementsPerThread).toBe(n / 2);
      expect(atom.registersPerThread).toBe(n / 2); // "N/2 number of .f32 registers"
      expect(fragmentTableViolation(atom, d), `N = ${n}`).toBeUndefined();
    }
    expect(bijectionModuloRViolation(wgmmaAccumulatorAtom({ n: 24 }).encoding)).toBeUndefined();
    expect(wgmmaAccumulatorAtom({ n: 64, dtype: 'fp16' }).registersPerThread).toBe(16); // "N/4 .f16x2 registers"
  });

  it('agrees with CUTLASS CLayout_64xN and with literal cells', () => {
    const atom = wgmmaAccumulatorAtom({ n: 256 });
    for (let thread = 0; thread < 128; thread++)
      for (let i = 0; i < 128; i++) expect(atom.elementXIndex(thread, i)).toEqual(cutlassCLayout(thread, i));
    expect([0, 1, 2, 3, 4, 5].map((i) => atom.elementXIndex(0, i))).toEqual([
      [0, 0],
      [0, 1],
      [8, 0],
      [8, 1],
      [0, 8],
      [0, 9],
    ]);
    expect(atom.elementXIndex(32, 0)).toEqual([16, 0]);
    expect(atom.elementXIndex(127, 127)).toEqual([63, 255]);
    expect(atom.instruction).toBe('wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16');
    expect(atom.target).toBe('sm_90a');
  });

  it('each warp of the m64n8 accumulator holds an mma.sync m16n8 C fragment, shifted by 16 rows per warp', () => {
    const wg = wgmmaAccumulatorAtom({ n: 8 });
    const c = mmaSyncAtoms('m16n8k16', 'fp16').c;
    for (let warp = 0; warp < 4; warp++)
      for (let lane = 0; lane < 32; lane++)
        for (let i = 0; i < 4; i++) {
          const [r, col] = c.elementXIndex(lane, i);
          expect(wg.elementXIndex(32 * warp + lane, i)).toEqual([16 * warp + r!, col]);
        }
  });

  it("int32 (the .s32 D of m64nNk32 s8/u8): the f32 layout cell by cell, N/2 32-bit registers, only the integer shapes' N", () => {
    const integerNs = [8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256];
    for (let n = 8; n <= 256; n += 8) {
      if (!integerNs.includes(n)) {
        expect(() => wgmmaAccumulatorAtom({ n, dtype: 'int32' }), `N = ${n}`).toThrow(/integer shape m64nNk32/);
        continue;
      }
      const atom = wgmmaAccumulatorAtom({ n, dtype: 'int32' });
      expect(atom.elementsPerThread).toBe(n / 2);
      expect(atom.registersPerThread).toBe(n / 2); // "N/2 .s32 registers"
      expect(fragmentTableViolation(atom, d), `N = ${n}`).toBeUndefined();
      expect(atom.encoding.equals(wgmmaAccumulatorAtom({ n }).encoding)).toBe(true);
    }
    const s32 = wgmmaAccumulatorAtom({ n: 128, dtype: 'int32' });
    expect(s32.instruction).toBe('wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.s8');
    expect(s32.name).toBe('wgmma.m64n128k32.s32.D');
    expect(s32.dtype).toBe('int32');
  });

  it('rejects bad N and dtypes', () => {
    expect(() => wgmmaAccumulatorAtom({ n: 12 })).toThrow(/multiple of 8/);
    expect(() => wgmmaAccumulatorAtom({ n: 264 })).toThrow(/multiple of 8 in \[8, 256\]/);
    expect(() => wgmmaAccumulatorAtom({ n: 64, dtype: 'bf16' })).toThrow(/fp32, fp16 or int32/);
  });
});
