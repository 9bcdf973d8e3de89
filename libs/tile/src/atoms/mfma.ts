import type { DTypeName } from '@tilekit/numeric';
import { AtomError } from '../errors.ts';
import { hRef, TileDistributionEncoding } from '../tileDistributionEncoding.ts';
import { FragmentAtom } from './fragmentAtom.ts';
import type { MmaAtoms } from './mmaSync.ts';

/** The MFMA shapes tilekit emits for gfx942 (wave64, fp16/bf16 inputs, fp32 accumulators). */
export type MfmaShape = '32x32x8' | '16x16x16';

const reference =
  'AMD Matrix Instruction Calculator (ROCm/amd_matrix_instruction_calculator, --detail-instruction "Register to matrix element mapping") for V_MFMA_F32_';

/**
 * AMD MFMA fragments for one wave64 (P = the lane, 64): `v_mfma_f32_32x32x8_{f16,bf16}` and
 * `v_mfma_f32_16x16x16_{f16,bf16}` (gfx942 mnemonics). With L = 32 or 16 lanes per K group and
 * G = 64 / L groups, the calculator's mappings are:
 * - A (M×K): lane l, element v (= 2·GPR + half) holds i = l mod L, k = 4·⌊l / L⌋ + v.
 *   Encoding H_M = (L), H_K = (G, 4); lane → (H_K[0], H_M[0]); Y = (H_K[1]).
 * - B (K×N): j = l mod L, k = 4·⌊l / L⌋ + v. H_K = (G, 4), H_N = (L); lane → (H_K[0], H_N[0]); Y = (H_K[1]).
 * - C/D (M×N), element = GPR: 32x32: i = 8·⌊GPR/4⌋ + 4·⌊l/32⌋ + GPR mod 4, j = l mod 32, i.e.
 *   H_M = (4, 2, 4), H_N = (32), lane → (H_M[1], H_N[0]), Y = (H_M[0], H_M[2]);
 *   16x16: i = 4·⌊l/16⌋ + GPR, j = l mod 16, i.e. H_M = (4, 4), H_N = (16), lane → (H_M[0], H_N[0]), Y = (H_M[1]).
 */
export function mfmaAtoms(shape: MfmaShape, dtype: DTypeName): MmaAtoms {
  if (shape !== '32x32x8' && shape !== '16x16x16') throw new AtomError('mfmaAtoms', 'shape must be 32x32x8 or 16x16x16', String(shape));
  if (dtype !== 'fp16' && dtype !== 'bf16') throw new AtomError(`v_mfma_f32_${shape}`, 'input dtype must be fp16 or bf16', dtype);
  const lanesPerGroup = shape === '32x32x8' ? 32 : 16;
  const groups = 64 / lanesPerGroup;
  const mn = lanesPerGroup;
  const k = 4 * groups;
  const suffix = dtype === 'fp16' ? 'f16' : 'bf16';
  const instruction = `v_mfma_f32_${shape}_${suffix}`;
  const ref = `${reference}${shape.toUpperCase()}${suffix.toUpperCase()} (CDNA1–3; gfx942 = CDNA3)`;
  const a = new TileDistributionEncoding({ hs: [[mn], [groups, 4]], ps: [[hRef(1, 0), hRef(0, 0)]], ys: [hRef(1, 1)] });
  const b = new TileDistributionEncoding({ hs: [[groups, 4], [mn]], ps: [[hRef(0, 0), hRef(1, 0)]], ys: [hRef(0, 1)] });
  const c =
    shape === '32x32x8'
      ? new TileDistributionEncoding({ hs: [[4, 2, 4], [32]], ps: [[hRef(0, 1), hRef(1, 0)]], ys: [hRef(0, 0), hRef(0, 2)] })
      : new TileDistributionEncoding({ hs: [[4, 4], [16]], ps: [[hRef(0, 0), hRef(1, 0)]], ys: [hRef(0, 1)] });
  const common = { instruction, target: 'gfx942' as const };
  const base = `mfma.${shape}.${suffix}`;
  return {
    instruction,
    m: mn,
    n: mn,
    k,
    a: new FragmentAtom({
      ...common,
      name: `${base}.A`,
      operand: 'A',
      dtype,
      xNames: ['m', 'k'],
      encoding: a,
      reference: `${ref}, A matrix`,
    }),
    b: new FragmentAtom({
      ...common,
      name: `${base}.B`,
      operand: 'B',
      dtype,
      xNames: ['k', 'n'],
      encoding: b,
      reference: `${ref}, B matrix`,
    }),
    c: new FragmentAtom({
      ...common,
      name: `${base}.C`,
      operand: 'C',
      dtype: 'fp32',
      xNames: ['m', 'n'],
      encoding: c,
      reference: `${ref}, C/D matrix`,
    }),
  };
}
