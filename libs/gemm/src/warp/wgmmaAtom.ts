import { defineFunction, float32, int32, pointer, uint32, uint64, type FunctionDef, type Target } from '@tilekit/codegen';
import type { DTypeName } from '@tilekit/numeric';
import { wgmmaAccumulatorAtom } from '@tilekit/tile';
import { WarpGemmAtomError } from '../errors.ts';
import type { OperandMajor } from '../smemLayouts.ts';
import { asmOperands, asmStatement, regList } from './asmStatement.ts';
import { ptxInputType } from './ptxInputType.ts';
import { WarpGemmAtom, type OperandSource } from './warpGemmAtom.ts';
import { isWgmmaFp8DType, wgmmaFp8Atom } from './wgmmaFp8Atom.ts';
import { wgmmaInt8Atom } from './wgmmaInt8Atom.ts';
import { wgmmaRegisterAFragment } from './wgmmaRegisterAFragment.ts';

/** Arguments of {@link wgmmaAtom}. */
export interface WgmmaAtomSpec {
  /**
   * N of m64nNk16: a multiple of 8 in [8, 256]; int8 (m64nNk32): one of {@link wgmmaInt8Ns}; fp8
   * (m64nNk32): one of {@link wgmmaFp8Ns} (again every multiple of 8 in [8, 256]).
   */
  readonly n: number;
  /**
   * fp16 or bf16 (A and B alike, fp32 D), int8 (s8·s8 → s32 D; K-major A and B from shared memory
   * only), or fp8e4m3fn / fp8e5m2 (e4m3·e4m3 / e5m2·e5m2 → f32 D, m64nNk32; K-major A and B from
   * shared memory only).
   */
  readonly dtype: DTypeName;
  /** Contiguous dim of A in shared memory (imm-trans-a = 0 for K, 1 for M); default K. */
  readonly aMajor?: OperandMajor;
  /** Contiguous dim of B in shared memory (imm-trans-b = 0 for K, 1 for N); default K. */
  readonly bMajor?: OperandMajor;
  /** Where A comes from (default shared memory); from registers A is K-major by definition. */
  readonly aSource?: OperandSource;
}

/** A float {@link WgmmaAtomSpec} after its checks: the PTX input type and every default filled in. */
interface CheckedWgmmaSpec {
  readonly t: string;
  readonly aSource: OperandSource;
  readonly aMajor: OperandMajor;
  readonly bMajor: OperandMajor;
}

/**
 * `wgmma.mma_async.sync.aligned.m64nNk16.f32.{f16,bf16}.{f16,bf16}` for one warpgroup (sm_90a),
 * A and B from shared memory through 64-bit matrix descriptors (PTX ISA 9.7.15.5.2
 * "wgmma.mma_async"; descriptors 9.7.15.5.1.2.2), D in registers with the layout of
 * `wgmmaAccumulatorAtom({ n })` (N/2 floats per thread). With `aSource: 'registers'` A is the
 * fragment of {@link wgmmaRegisterAFragment} and the wrapper is `..._rs_k<bMajor>(float* d, const
 * unsigned int* a, unsigned long long desc_b, int scale_d)`. Shared-A wrapper:
 * `void tk_wgmma_m64n<N>k16_f32_<t>_<t>_ss_<aMajor><bMajor>(float* d, unsigned long long desc_a,
 * unsigned long long desc_b, int scale_d)`: D = A·B + (scale_d ? D : 0); imm-scale-a/b = 1.
 * Issue it between {@link defineWgmmaFence} and {@link defineWgmmaCommitGroup} /
 * {@link defineWgmmaWaitGroup}. `dtype: 'int8'` gives the integer form instead: see
 * {@link wgmmaInt8Atom} (`m64nNk32.s32.s8.s8`, k = 32, int32 D, K-major shared A and B only);
 * `dtype: 'fp8e4m3fn'` / `'fp8e5m2'` the FP8 form: see {@link wgmmaFp8Atom}
 * (`m64nNk32.f32.e4m3.e4m3` / `.e5m2.e5m2`, k = 32, fp32 D, K-major shared A and B only).
 */
export function wgmmaAtom(spec: WgmmaAtomSpec): WarpGemmAtom {
  const { n, dtype } = spec;
  if (dtype === 'int8') return wgmmaInt8Atom(spec);
  if (isWgmmaFp8DType(dtype)) return wgmmaFp8Atom(spec);
  const { t, aSource, aMajor, bMajor } = checkWgmmaSpec(spec);
  const c = wgmmaAccumulatorAtom({ n, dtype: 'fp32' });
  const majors = `${aMajor === 'K' ? 'k' : 'm'}${bMajor === 'K' ? 'k' : 'n'}`;
  const fromRegisters = aSource === 'registers';
  return new WarpGemmAtom({
    kind: 'wgmma',
    instruction: `wgmma.mma_async.sync.aligned.m64n${n}k16.f32.${t}.${t}`,
    targets: ['sm_90a'],
    aType: dtype,
    bType: dtype,
    accType: 'fp32',
    m: 64,
    n,
    k: 16,
    threads: 128,
    aSource,
    bSource: 'shared',
    a: fromRegisters ? wgmmaRegisterAFragment(dtype) : null,
    b: null,
    c,
    aMajor,
    bMajor,
    wrapperName: `tk_wgmma_m64n${n}k16_f32_${t}_${t}_${fromRegisters ? 'rs' : 'ss'}_${majors}`,
    reference: `PTX ISA 9.7.15.5.2 "wgmma.mma_async" (descriptors 9.7.15.5.1.2.2); D: ${c.reference}`,
    define: (atom, target) => {
      target.require('wgmma');
      return atom.a !== null ? defineWgmmaRsWrapper(atom, target, t) : defineWgmmaSsWrapper(atom, target);
    },
  });
}

/** Checks a float wgmma spec in order: dtype, n, aSource, a register A's major, then both majors. */
function checkWgmmaSpec(spec: WgmmaAtomSpec): CheckedWgmmaSpec {
  const { n, dtype } = spec;
  const t = ptxInputType('wgmma m64nNk16', dtype);
  if (!Number.isSafeInteger(n) || n < 8 || n > 256 || n % 8 !== 0)
    throw new WarpGemmAtomError('wgmma m64nNk16', 'n must be a multiple of 8 in [8, 256]', String(n));
  const aSource = spec.aSource ?? 'shared';
  if (aSource !== 'shared' && aSource !== 'registers')
    throw new WarpGemmAtomError('wgmma aSource', 'must be "shared" or "registers"', String(aSource));
  const aMajor = spec.aMajor ?? 'K';
  if (aSource === 'registers' && aMajor !== 'K')
    throw new WarpGemmAtomError('wgmma aMajor', 'A in registers is K-major (wgmma has no imm-trans-a then)', aMajor);
  const bMajor = spec.bMajor ?? 'K';
  for (const [what, major] of [
    ['aMajor', aMajor],
    ['bMajor', bMajor],
  ] as const) {
    if (major !== 'K' && major !== 'MN') throw new WarpGemmAtomError(`wgmma ${what}`, 'must be "K" or "MN"', String(major));
  }
  return { t, aSource, aMajor, bMajor };
}

/** The imm-trans immediate of an operand: 0 when K-major, 1 when MN-major. */
function transOf(major: OperandMajor): number {
  return major === 'K' ? 0 : 1;
}

/** The `..._rs_*` leaf: A in registers ({a0..a3}, .f16x2/.bf16x2) replaces desc_a, and there is no imm-trans-a. */
function defineWgmmaRsWrapper(atom: WarpGemmAtom, target: Target, t: string): FunctionDef {
  const { instruction } = atom;
  const nd = atom.c.elementsPerThread;
  const na = atom.a!.registersPerThread;
  const transB = transOf(atom.bMajor);
  return defineFunction(
    {
      name: atom.wrapperName,
      qualifiers: target.functionQualifiers('force'),
      params: { d: pointer(float32), a: pointer(uint32, { const: true }), desc_b: uint64, scale_d: int32 },
    },
    (b) => {
      b.comment(
        `${instruction}: D (${nd} f32 per thread) = A (${na} x .${t}x2 registers) * B[desc_b] + (scale_d ? D : 0); trans-b ${transB}`,
      );
      b.verbatim(
        asmStatement(
          [
            '{',
            '.reg .pred p;',
            `setp.ne.b32 p, %${nd + na + 1}, 0;`,
            `${instruction} ${regList(0, nd)}, ${regList(nd, na)}, %${nd + na}, p, 1, 1, ${transB};`,
            '}',
          ],
          asmOperands('+f', 'd', nd),
          [...asmOperands('r', 'a', na), '"l"(desc_b)', '"r"(scale_d)'],
        ),
      );
    },
  );
}

/** The `..._ss_*` leaf: A and B both through shared-memory matrix descriptors, with both imm-trans immediates. */
function defineWgmmaSsWrapper(atom: WarpGemmAtom, target: Target): FunctionDef {
  const { instruction } = atom;
  const nd = atom.c.elementsPerThread;
  const transA = transOf(atom.aMajor);
  const transB = transOf(atom.bMajor);
  return defineFunction(
    {
      name: atom.wrapperName,
      qualifiers: target.functionQualifiers('force'),
      params: { d: pointer(float32), desc_a: uint64, desc_b: uint64, scale_d: int32 },
    },
    (b) => {
      b.comment(
        `${instruction}: D (${nd} f32 per thread) = A[desc_a] * B[desc_b] + (scale_d ? D : 0); trans-a ${transA}, trans-b ${transB}`,
      );
      b.verbatim(
        asmStatement(
          [
            '{',
            '.reg .pred p;',
            `setp.ne.b32 p, %${nd + 2}, 0;`,
            `${instruction} ${regList(0, nd)}, %${nd}, %${nd + 1}, p, 1, 1, ${transA}, ${transB};`,
            '}',
          ],
          asmOperands('+f', 'd', nd),
          ['"l"(desc_a)', '"l"(desc_b)', '"r"(scale_d)'],
        ),
      );
    },
  );
}
