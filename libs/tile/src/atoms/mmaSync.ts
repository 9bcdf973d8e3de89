import type { TargetName } from '@tilekit/codegen';
import { getDType, type DTypeName } from '@tilekit/numeric';
import { AtomError } from '../errors.ts';
import { hRef, TileDistributionEncoding } from '../tileDistributionEncoding.ts';
import { FragmentAtom } from './fragmentAtom.ts';

/** `mma.sync` shapes tilekit uses: 16-bit inputs take k16, 8-bit inputs k32. */
export type MmaSyncShape = 'm16n8k16' | 'm16n8k32';

/** The three operand fragments of one warp-level MMA instruction. */
export interface MmaAtoms {
  readonly instruction: string;
  readonly m: number;
  readonly n: number;
  readonly k: number;
  /** A: M×K. */
  readonly a: FragmentAtom;
  /** B: K×N. */
  readonly b: FragmentAtom;
  /** C and D: M×N accumulators. */
  readonly c: FragmentAtom;
}

const ptxType: Partial<Record<DTypeName, string>> = {
  fp16: 'f16',
  bf16: 'bf16',
  fp8e4m3fn: 'e4m3',
  fp8e5m2: 'e5m2',
  int8: 's8',
  uint8: 'u8',
};
const inputsOf: Record<MmaSyncShape, readonly DTypeName[]> = {
  m16n8k16: ['fp16', 'bf16'],
  m16n8k32: ['fp8e4m3fn', 'fp8e5m2', 'int8', 'uint8'],
};
const sections: Record<MmaSyncShape, string> = {
  m16n8k16: 'PTX ISA 9.7.14.5.8 "Matrix Fragments for mma.m16n8k16 with floating point type" (#warp-level-matrix-fragment-mma-16816-float)',
  m16n8k32: 'PTX ISA 9.7.14.5.10 "Matrix Fragments for mma.m16n8k32" (#warp-level-matrix-fragment-mma-16832)',
};

/**
 * The `mma.sync.aligned.{m16n8k16,m16n8k32}.row.col` fragments for A and B of `dtype` (fp16/bf16
 * with k16; fp8 e4m3/e5m2 or int8/uint8 with k32) and their fp32 (int32 for integers) accumulators.
 * One P (the lane, 32); groupID = lane / 4 and threadID_in_group = lane % 4 are its two digits.
 * With p = 32 / bits elements per 32-bit register (2 or 4) and K = 8·p:
 * - A (16×K): H_M = (2, 8), H_K = (2, 4, p); lane → (H_M[1], H_K[1]); Y = (H_K[0], H_M[0], H_K[2]),
 *   i.e. element i = 2p·khi + p·mhi + kv sits at row g + 8·mhi, col 4p·khi + p·t + kv.
 * - B (K×8): H_K = (2, 4, p), H_N = (8); lane → (H_N[0], H_K[1]); Y = (H_K[0], H_K[2]).
 * - C (16×8): H_M = (2, 8), H_N = (4, 2); lane → (H_M[1], H_N[0]); Y = (H_M[0], H_N[1]).
 * Golden tests compare every (lane, element) with the PTX formulas.
 */
export function mmaSyncAtoms(shape: MmaSyncShape, dtype: DTypeName): MmaAtoms {
  const allowed = inputsOf[shape];
  if (allowed === undefined) throw new AtomError('mmaSyncAtoms', `shape must be one of ${Object.keys(inputsOf).join(', ')}`, String(shape));
  if (!allowed.includes(dtype)) throw new AtomError(`mma.sync ${shape}`, `input dtype must be one of ${allowed.join(', ')}`, dtype);
  const p = 32 / getDType(dtype).bits;
  const k = 8 * p;
  const isInt = dtype === 'int8' || dtype === 'uint8';
  const acc: DTypeName = isInt ? 'int32' : 'fp32';
  const accPtx = isInt ? 's32' : 'f32';
  const inPtx = ptxType[dtype]!;
  const instruction = `mma.sync.aligned.${shape}.row.col.${accPtx}.${inPtx}.${inPtx}.${accPtx}`;
  // e4m3/e5m2 mma.sync needs sm_89; among tilekit's targets that is sm_90a.
  const target: TargetName = dtype === 'fp8e4m3fn' || dtype === 'fp8e5m2' ? 'sm_90a' : 'sm_80';
  const base = `mma.${shape}.${inPtx}`;
  const ref = sections[shape];
  const a = new TileDistributionEncoding({
    hs: [
      [2, 8],
      [2, 4, p],
    ],
    ps: [[hRef(0, 1), hRef(1, 1)]],
    ys: [hRef(1, 0), hRef(0, 0), hRef(1, 2)],
  });
  const b = new TileDistributionEncoding({ hs: [[2, 4, p], [8]], ps: [[hRef(1, 0), hRef(0, 1)]], ys: [hRef(0, 0), hRef(0, 2)] });
  const c = new TileDistributionEncoding({
    hs: [
      [2, 8],
      [4, 2],
    ],
    ps: [[hRef(0, 1), hRef(1, 0)]],
    ys: [hRef(0, 0), hRef(1, 1)],
  });
  const common = { instruction, target };
  return {
    instruction,
    m: 16,
    n: 8,
    k,
    a: new FragmentAtom({
      ...common,
      name: `${base}.A`,
      operand: 'A',
      dtype,
      xNames: ['m', 'k'],
      encoding: a,
      reference: `${ref}, multiplicand A`,
    }),
    b: new FragmentAtom({
      ...common,
      name: `${base}.B`,
      operand: 'B',
      dtype,
      xNames: ['k', 'n'],
      encoding: b,
      reference: `${ref}, multiplicand B`,
    }),
    c: new FragmentAtom({
      ...common,
      name: `${base}.C`,
      operand: 'C',
      dtype: acc,
      xNames: ['m', 'n'],
      encoding: c,
      reference: `${ref}, accumulators C/D`,
    }),
  };
}
