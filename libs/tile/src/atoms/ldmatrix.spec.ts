import { describe, expect, it } from 'vitest';
import { AtomError } from '../errors.ts';
import { sliceEncoding } from '../sliceEncoding.ts';
import { bijectionModuloRViolation } from '../testing/bruteForce.ts';
import { fragmentTableViolation, type FragmentCell } from '../testing/fragmentTables.ts';
import { ldmatrixAtom, type LdmatrixSpec } from './ldmatrix.ts';
import { mmaSyncAtoms } from './mmaSync.ts';

// PTX ISA 9.7.14.5.15 (ldmatrix), Figure 104: "each thread in a warp loads fragments of a row, with
// thread 0 receiving the first fragment in its register r … a group of four threads loads an entire
// row": lane l holds row l / 4, cols 2·(l % 4) + {0, 1} of an 8×8 matrix; the i-th destination
// register holds matrix i; `.trans` loads the matrix column-major, so lane l holds (memory) row
// 2·(l % 4) + j, col l / 4.
function ldmatrixTable(spec: Required<Pick<LdmatrixSpec, 'num' | 'trans' | 'grid' | 'order'>>): FragmentCell {
  const [gr, gc] = spec.grid;
  return (lane, element) => {
    const m = element >> 1; // register = matrix
    const j = element & 1;
    const [br, bc] = spec.order === 'columnMajor' ? [m % gr, Math.floor(m / gr)] : [Math.floor(m / gc), m % gc];
    const [r, c] = spec.trans ? [2 * (lane % 4) + j, lane >> 2] : [lane >> 2, 2 * (lane % 4) + j];
    return [8 * br + r, 8 * bc + c];
  };
}

const configs: Required<Pick<LdmatrixSpec, 'num' | 'trans' | 'grid' | 'order'>>[] = [];
for (const trans of [false, true])
  for (const order of ['columnMajor', 'rowMajor'] as const) {
    configs.push({ num: 1, trans, grid: [1, 1], order });
    for (const grid of [
      [2, 1],
      [1, 2],
    ] as const)
      configs.push({ num: 2, trans, grid, order });
    for (const grid of [
      [2, 2],
      [4, 1],
      [1, 4],
    ] as const)
      configs.push({ num: 4, trans, grid, order });
  }

describe('ldmatrix fragments match the PTX ISA cell by cell', () => {
  it('every .num, with and without .trans, every grid and register order', () => {
    for (const cfg of configs) {
      const atom = ldmatrixAtom(cfg);
      expect(fragmentTableViolation(atom, ldmatrixTable(cfg)), JSON.stringify(cfg)).toBeUndefined();
      expect(bijectionModuloRViolation(atom.encoding)).toBeUndefined();
      expect(atom.registersPerThread).toBe(cfg.num); // "1, 2, or 4 32-bit registers as per .num"
      expect(atom.elementsPerThread).toBe(2 * cfg.num);
    }
  });

  it('row addresses follow the .num table: lanes 8m..8m+7 address rows 0..7 of matrix m', () => {
    for (const cfg of configs) {
      const atom = ldmatrixAtom(cfg);
      for (let lane = 0; lane < 32; lane++) {
        const m = lane >> 3;
        if (m >= cfg.num) {
          expect(atom.rowAddressOf(lane)).toBeUndefined();
          continue;
        }
        const [br, bc] = atom.matrixBlock(m);
        expect(atom.rowAddressOf(lane)).toEqual([8 * br + (lane % 8), 8 * bc]);
      }
    }
    const x4 = ldmatrixAtom({ num: 4 });
    expect([0, 7, 8, 15, 16, 31].map((l) => x4.rowAddressOf(l))).toEqual([
      [0, 0],
      [7, 0],
      [8, 0],
      [15, 0],
      [0, 8],
      [15, 8],
    ]);
    expect(() => x4.rowAddressOf(32)).toThrow(AtomError);
  });

  it('literal cells: lane 0 holds (0, 0..1); lane 5 holds (1, 2..3), or with .trans (2..3, 1)', () => {
    const x1 = ldmatrixAtom({ num: 1 });
    expect([x1.elementXIndex(0, 0), x1.elementXIndex(0, 1), x1.elementXIndex(5, 0), x1.elementXIndex(5, 1)]).toEqual([
      [0, 0],
      [0, 1],
      [1, 2],
      [1, 3],
    ]);
    const t1 = ldmatrixAtom({ num: 1, trans: true });
    expect([t1.elementXIndex(5, 0), t1.elementXIndex(5, 1), t1.elementXIndex(31, 1)]).toEqual([
      [2, 1],
      [3, 1],
      [7, 7],
    ]);
    expect(t1.instruction).toBe('ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16');
  });

  it('x4 is the mma.m16n8k16 A fragment and x2.trans is its B fragment; x4.trans holds B for two n8 tiles', () => {
    const mma = mmaSyncAtoms('m16n8k16', 'fp16');
    expect(ldmatrixAtom({ num: 4 }).encoding.equals(mma.a.encoding)).toBe(true);
    expect(ldmatrixAtom({ num: 2, trans: true }).encoding.equals(mma.b.encoding)).toBe(true);
    const x4t = ldmatrixAtom({ num: 4, trans: true }).encoding;
    for (const n0 of [0, 8]) {
      const s = sliceEncoding(x4t, [0, n0], [16, n0 + 8]);
      expect(s.yOrigins).toEqual([n0 / 8, 0, 0]);
      for (let lane = 0; lane < 32; lane++)
        for (let i = 0; i < 4; i++) {
          const ys = s.encoding.calculateYIndex(i);
          expect(s.encoding.calculateXIndex([lane], ys)).toEqual(mma.b.elementXIndex(lane, i));
        }
    }
  });

  it('rejects bad arguments', () => {
    expect(() => ldmatrixAtom({ num: 3 as 4 })).toThrow(/num must be 1, 2 or 4/);
    expect(() => ldmatrixAtom({ num: 4, grid: [2, 1] })).toThrow(/rows·cols = num/);
    expect(() => ldmatrixAtom({ num: 1, dtype: 'fp32' })).toThrow(/16-bit/);
  });
});
