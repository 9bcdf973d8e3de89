import { describe, expect, it } from 'vitest';
import { bijectionModuloRViolation } from '../testing/bruteForce.ts';
import { fragmentTableViolation, type FragmentCell } from '../testing/fragmentTables.ts';
import { mfmaAtoms } from './mfma.ts';

// AMD Matrix Instruction Calculator, `--detail-instruction`, "Register to matrix element mapping with no
// modifiers" (element v of a lane = 2·GPR_num + GPR_bits/16 for 16-bit inputs, = GPR_num for C/D):
//   V_MFMA_F32_32X32X8F16:  A i = lane % 32, A k = 4·⌊lane/32⌋ + 2·GPR_num + ⌊GPR_bits/16⌋ (B: j, k alike);
//                           C/D i = (8·⌊GPR_num/4⌋ % 32) + 4·⌊lane/32⌋ + GPR_num % 4, C/D j = lane % 32.
//   V_MFMA_F32_16X16X16F16: A i = lane % 16, A k = 4·⌊lane/16⌋ + 2·GPR_num + ⌊GPR_bits/16⌋ (B: j, k alike);
//                           C/D i = 4·⌊lane/16⌋ + GPR_num % 4, C/D j = lane % 16.
const tables = {
  '32x32x8': {
    a: ((lane, v) => [lane % 32, 4 * Math.floor(lane / 32) + v]) as FragmentCell,
    b: ((lane, v) => [4 * Math.floor(lane / 32) + v, lane % 32]) as FragmentCell,
    c: ((lane, gpr) => [((8 * Math.floor(gpr / 4)) % 32) + 4 * Math.floor(lane / 32) + (gpr % 4), lane % 32]) as FragmentCell,
    gprs: [2, 2, 16],
  },
  '16x16x16': {
    a: ((lane, v) => [lane % 16, 4 * Math.floor(lane / 16) + v]) as FragmentCell,
    b: ((lane, v) => [4 * Math.floor(lane / 16) + v, lane % 16]) as FragmentCell,
    c: ((lane, gpr) => [4 * Math.floor(lane / 16) + (gpr % 4), lane % 16]) as FragmentCell,
    gprs: [2, 2, 4],
  },
} as const;

describe('MFMA fragments (wave64, gfx942) match the AMD matrix instruction calculator cell by cell', () => {
  for (const shape of ['32x32x8', '16x16x16'] as const)
    for (const dtype of ['fp16', 'bf16'] as const) {
      it(`v_mfma_f32_${shape}_${dtype === 'fp16' ? 'f16' : 'bf16'}`, () => {
        const atoms = mfmaAtoms(shape, dtype);
        const t = tables[shape];
        expect(fragmentTableViolation(atoms.a, t.a)).toBeUndefined();
        expect(fragmentTableViolation(atoms.b, t.b)).toBeUndefined();
        expect(fragmentTableViolation(atoms.c, t.c)).toBeUndefined();
        for (const atom of [atoms.a, atoms.b, atoms.c]) {
          expect(atom.threads).toBe(64);
          expect(bijectionModuloRViolation(atom.encoding)).toBeUndefined();
        }
        // "GPRs required for A / B / C".
        expect([atoms.a.registersPerThread, atoms.b.registersPerThread, atoms.c.registersPerThread]).toEqual(t.gprs);
        expect(atoms.instruction).toBe(`v_mfma_f32_${shape}_${dtype === 'fp16' ? 'f16' : 'bf16'}`);
        expect(atoms.a.target).toBe('gfx942');
      });
    }

  it('the calculator\'s other direction ("Matrix element to register mapping") and literal cells', () => {
    const m32 = mfmaAtoms('32x32x8', 'fp16');
    for (let i = 0; i < 32; i++)
      for (let k = 0; k < 8; k++) {
        // A[i][k] GPR = ⌊k/2⌋ % 2, bits [16·(k%2)+15 : 16·(k%2)], Lane = 32·⌊k/4⌋ + i.
        expect(m32.a.ownerOf([i, k])).toEqual([32 * Math.floor(k / 4) + i, 2 * (Math.floor(k / 2) % 2) + (k % 2)]);
      }
    for (let i = 0; i < 32; i++)
      for (let j = 0; j < 32; j++) {
        // C/D[i][j] GPR = 4·⌊i/8⌋ + i % 4, Lane = (32·⌊i/4⌋) % 64 + j.
        expect(m32.c.ownerOf([i, j])).toEqual([((32 * Math.floor(i / 4)) % 64) + j, 4 * Math.floor(i / 8) + (i % 4)]);
      }
    const m16 = mfmaAtoms('16x16x16', 'bf16');
    for (let i = 0; i < 16; i++)
      for (let j = 0; j < 16; j++) {
        // C/D[i][j] GPR = i % 4, Lane = 16·⌊i/4⌋ + j; B[k][j] Lane = 16·⌊k/4⌋ + j.
        expect(m16.c.ownerOf([i, j])).toEqual([16 * Math.floor(i / 4) + j, i % 4]);
        expect(m16.b.ownerOf([i, j])).toEqual([16 * Math.floor(i / 4) + j, 2 * (Math.floor(i / 2) % 2) + (i % 2)]);
      }
    expect(m32.c.elementXIndex(0, 0)).toEqual([0, 0]);
    expect(m32.c.elementXIndex(32, 0)).toEqual([4, 0]);
    expect(m32.c.elementXIndex(0, 4)).toEqual([8, 0]);
    expect(m32.c.elementXIndex(63, 15)).toEqual([31, 31]);
    expect(m32.a.elementXIndex(33, 2)).toEqual([1, 6]);
    expect(m16.a.elementXIndex(47, 3)).toEqual([15, 11]);
  });

  it('rejects other shapes and dtypes', () => {
    expect(() => mfmaAtoms('4x4x4' as '16x16x16', 'fp16')).toThrow(/shape must be/);
    expect(() => mfmaAtoms('32x32x8', 'int8')).toThrow(/fp16 or bf16/);
  });
});
