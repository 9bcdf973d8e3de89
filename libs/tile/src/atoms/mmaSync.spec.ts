import { describe, expect, it } from 'vitest';
import { AtomError } from '../errors.ts';
import { fragmentTableViolation, type FragmentCell } from '../testing/fragmentTables.ts';
import { bijectionModuloRViolation } from '../testing/bruteForce.ts';
import { mmaSyncAtoms } from './mmaSync.ts';

// Golden tables transcribed from the PTX ISA (9.7.14.5.8 and 9.7.14.5.10), with
//   groupID = %laneid >> 2, threadID_in_group = %laneid % 4.
const g = (lane: number): number => lane >> 2;
const t = (lane: number): number => lane % 4;

/** 9.7.14.5.8, Figure 79 (A, .f16/.bf16): a0..a7. */
const a16: FragmentCell = (lane, i) => [
  i < 2 || (4 <= i && i < 6) ? g(lane) : g(lane) + 8,
  i < 4 ? t(lane) * 2 + (i & 0x1) : t(lane) * 2 + (i & 0x1) + 8,
];
/** 9.7.14.5.8, Figure 81 (B, .f16/.bf16): b0..b3. */
const b16: FragmentCell = (lane, i) => [i < 2 ? t(lane) * 2 + (i & 0x1) : t(lane) * 2 + (i & 0x1) + 8, g(lane)];
/** 9.7.14.5.8, Figure 83 and 9.7.14.5.10, Figure 92 (C/D): c0..c3. */
const c: FragmentCell = (lane, i) => [i < 2 ? g(lane) : g(lane) + 8, t(lane) * 2 + (i & 0x1)];
/** 9.7.14.5.10, Figure 88 (A, .s8/.u8/.e4m3/.e5m2): a0..a15. */
const a8: FragmentCell = (lane, i) => [
  i < 4 || (8 <= i && i < 12) ? g(lane) : g(lane) + 8,
  i < 8 ? t(lane) * 4 + (i & 0x3) : t(lane) * 4 + (i & 0x3) + 16,
];
/** 9.7.14.5.10, Figures 90–91 (B, 8-bit): b0..b7. */
const b8: FragmentCell = (lane, i) => [i < 4 ? t(lane) * 4 + (i & 0x3) : t(lane) * 4 + (i & 0x3) + 16, g(lane)];

describe('mma.sync fragments match the PTX ISA cell by cell', () => {
  for (const dtype of ['fp16', 'bf16'] as const) {
    it(`m16n8k16 ${dtype}: A 16×16, B 16×8, C 16×8 (fp32)`, () => {
      const atoms = mmaSyncAtoms('m16n8k16', dtype);
      expect(fragmentTableViolation(atoms.a, a16)).toBeUndefined();
      expect(fragmentTableViolation(atoms.b, b16)).toBeUndefined();
      expect(fragmentTableViolation(atoms.c, c)).toBeUndefined();
      for (const atom of [atoms.a, atoms.b, atoms.c]) expect(bijectionModuloRViolation(atom.encoding)).toBeUndefined();
      const p = dtype === 'fp16' ? 'f16' : 'bf16';
      expect(atoms.instruction).toBe(`mma.sync.aligned.m16n8k16.row.col.f32.${p}.${p}.f32`);
      expect([atoms.m, atoms.n, atoms.k]).toEqual([16, 8, 16]);
      // "four .f16x2 registers" (A), "two .f16x2 registers" (B), "four .f32 registers" (C).
      expect([atoms.a.registersPerThread, atoms.b.registersPerThread, atoms.c.registersPerThread]).toEqual([4, 2, 4]);
      expect(atoms.a.shape).toEqual([16, 16]);
      expect(atoms.c.dtype).toBe('fp32');
      expect(atoms.a.target).toBe('sm_80');
    });
  }

  for (const dtype of ['fp8e4m3fn', 'fp8e5m2', 'int8', 'uint8'] as const) {
    it(`m16n8k32 ${dtype}: A 16×32, B 32×8, C 16×8`, () => {
      const atoms = mmaSyncAtoms('m16n8k32', dtype);
      expect(fragmentTableViolation(atoms.a, a8)).toBeUndefined();
      expect(fragmentTableViolation(atoms.b, b8)).toBeUndefined();
      expect(fragmentTableViolation(atoms.c, c)).toBeUndefined();
      for (const atom of [atoms.a, atoms.b, atoms.c]) expect(bijectionModuloRViolation(atom.encoding)).toBeUndefined();
      expect([atoms.a.registersPerThread, atoms.b.registersPerThread, atoms.c.registersPerThread]).toEqual([4, 2, 4]);
      expect(atoms.k).toBe(32);
      const isInt = dtype === 'int8' || dtype === 'uint8';
      expect(atoms.c.dtype).toBe(isInt ? 'int32' : 'fp32');
      expect(atoms.a.target).toBe(isInt ? 'sm_80' : 'sm_90a');
    });
  }

  it('literal cells', () => {
    const k16 = mmaSyncAtoms('m16n8k16', 'fp16');
    const a = (lane: number, i: number): number[] => k16.a.elementXIndex(lane, i);
    // Lane 0: a0,a1 = (0, 0..1); a2,a3 = (8, 0..1); a4,a5 = (0, 8..9); a6,a7 = (8, 8..9).
    expect([0, 1, 2, 3, 4, 5, 6, 7].map((i) => a(0, i))).toEqual([
      [0, 0],
      [0, 1],
      [8, 0],
      [8, 1],
      [0, 8],
      [0, 9],
      [8, 8],
      [8, 9],
    ]);
    expect(a(31, 7)).toEqual([15, 15]);
    // C: c0,c1 = (groupID, 2·threadID_in_group + {0,1}), c2,c3 = groupID + 8.
    expect([0, 1, 2, 3].map((i) => k16.c.elementXIndex(5, i))).toEqual([
      [1, 2],
      [1, 3],
      [9, 2],
      [9, 3],
    ]);
    expect([0, 1, 2, 3].map((i) => k16.b.elementXIndex(6, i))).toEqual([
      [4, 1],
      [5, 1],
      [12, 1],
      [13, 1],
    ]);
    const k32 = mmaSyncAtoms('m16n8k32', 'int8');
    expect(Array.from({ length: 16 }, (_, i) => k32.a.elementXIndex(0, i))).toEqual([
      [0, 0],
      [0, 1],
      [0, 2],
      [0, 3],
      [8, 0],
      [8, 1],
      [8, 2],
      [8, 3],
      [0, 16],
      [0, 17],
      [0, 18],
      [0, 19],
      [8, 16],
      [8, 17],
      [8, 18],
      [8, 19],
    ]);
    expect(Array.from({ length: 8 }, (_, i) => k32.b.elementXIndex(9, i))).toEqual([
      [4, 2],
      [5, 2],
      [6, 2],
      [7, 2],
      [20, 2],
      [21, 2],
      [22, 2],
      [23, 2],
    ]);
    expect(k32.instruction).toBe('mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32');
    expect(mmaSyncAtoms('m16n8k32', 'fp8e4m3fn').instruction).toBe('mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32');
    expect(k16.a.toString()).toBe(
      'mma.m16n8k16.f16.A (mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32): m=16 × k=16, 32 threads × 8 fp16 in 4 registers',
    );
  });

  it('the A encoding is the PTX ISA m16n8k16 fp16 A fragment: H_M = (2, 8), H_K = (2, 4, 2), lane → (H_M[1], H_K[1]), Y = (H_K[0], H_M[0], H_K[2])', () => {
    expect(mmaSyncAtoms('m16n8k16', 'fp16').a.encoding.toString()).toBe(
      'TileDistributionEncoding R () H ((2, 8), (2, 4, 2)); P0 → h0[1] h1[1]; Y → h1[0] h0[0] h1[2]',
    );
  });

  it('rejects dtypes the shape does not take', () => {
    expect(() => mmaSyncAtoms('m16n8k16', 'int8')).toThrow(AtomError);
    expect(() => mmaSyncAtoms('m16n8k32', 'fp16')).toThrow(/input dtype must be one of/);
    expect(() => mmaSyncAtoms('m16n8k8' as 'm16n8k16', 'fp16')).toThrow(/shape must be one of/);
  });
});
