import type { FunctionDef, Target } from '@tilekit/codegen';
import type { DTypeName } from '@tilekit/numeric';
import { wgmmaAccumulatorAtom } from '@tilekit/tile';
import { WarpGemmAtomError } from '../errors.ts';
import { checkByteWgmmaOperands, defineByteWgmmaWrapper } from './byteWgmmaForm.ts';
import { WarpGemmAtom } from './warpGemmAtom.ts';
import type { WgmmaAtomSpec } from './wgmmaAtom.ts';

/**
 * The N values of `wgmma.mma_async.sync.aligned.m64nNk32.f32.<e4m3|e5m2>.<e4m3|e5m2>` (PTX ISA
 * 9.7.15.5.2, the "FP8 floating point type" `.shape` list): every multiple of 8 from 8 to 256.
 */
export const wgmmaFp8Ns: readonly number[] = Object.freeze(Array.from({ length: 32 }, (_, i) => 8 * (i + 1)));

/** The PTX type of each FP8 input dtype (`.atype` / `.btype`). */
const fp8PtxType: Partial<Record<DTypeName, string>> = { fp8e4m3fn: 'e4m3', fp8e5m2: 'e5m2' };

/** Whether `dtype` is an input of the FP8 wgmma (`fp8e4m3fn` → `.e4m3`, `fp8e5m2` → `.e5m2`). */
export function isWgmmaFp8DType(dtype: DTypeName): boolean {
  return fp8PtxType[dtype] !== undefined;
}

/**
 * `wgmma.mma_async.sync.aligned.m64nNk32.f32.<t>.<t>` with t = `e4m3` (`fp8e4m3fn`) or `e5m2`
 * (`fp8e5m2`): the FP8 floating point form (PTX ISA 9.7.15.5.2) for one warpgroup. A (64×32) and B
 * (32×N) come from shared memory through matrix descriptors, both K-major — the FP8 form has no
 * imm-trans-a/b (transpose is .f16/.bf16 only), so its operand list is `d, a-desc, b-desc, scale-d,
 * imm-scale-a, imm-scale-b` (both scales 1 here: no negation). D is N/2 fp32 registers per thread
 * laid out exactly like the bf16 D (`wgmmaAccumulatorAtom({ n, dtype: 'fp32' })`). Wrapper:
 * `void tk_wgmma_m64n<N>k32_f32_<t>_<t>_ss_kk(float* d, unsigned long long desc_a, unsigned long
 * long desc_b, int scale_d)`: D = A·B + (scale_d ? D : 0). Anything else (a non-FP8 dtype,
 * MN-major, A in registers, an N outside {@link wgmmaFp8Ns}) is a `WarpGemmAtomError`.
 */
export function wgmmaFp8Atom(spec: WgmmaAtomSpec): WarpGemmAtom {
  const { n, dtype } = spec;
  const t = checkWgmmaFp8Spec(spec);
  const c = wgmmaAccumulatorAtom({ n, dtype: 'fp32' });
  return new WarpGemmAtom({
    kind: 'wgmma',
    instruction: `wgmma.mma_async.sync.aligned.m64n${n}k32.f32.${t}.${t}`,
    targets: ['sm_90a'],
    aType: dtype,
    bType: dtype,
    accType: 'fp32',
    m: 64,
    n,
    k: 32,
    threads: 128,
    aSource: 'shared',
    bSource: 'shared',
    a: null,
    b: null,
    c,
    aMajor: 'K',
    bMajor: 'K',
    wrapperName: `tk_wgmma_m64n${n}k32_f32_${t}_${t}_ss_kk`,
    reference: `PTX ISA 9.7.15.5.2 "wgmma.mma_async" (FP8 floating point type; descriptors 9.7.15.5.1.2.2); D: ${c.reference}`,
    define: defineWgmmaFp8Wrapper,
  });
}

/** Checks an FP8 wgmma spec in order: dtype, n among the FP8 shapes, A from shared memory, both operands K-major; returns the PTX type. */
function checkWgmmaFp8Spec(spec: WgmmaAtomSpec): string {
  const { n, dtype } = spec;
  const t = fp8PtxType[dtype];
  if (t === undefined) throw new WarpGemmAtomError('wgmma m64nNk32 fp8', 'input dtype must be fp8e4m3fn or fp8e5m2', String(dtype));
  if (!wgmmaFp8Ns.includes(n)) throw new WarpGemmAtomError('wgmma m64nNk32 fp8', 'n must be a multiple of 8 in [8, 256]', String(n));
  checkByteWgmmaOperands(spec, 'fp8');
  return t;
}

/** The `tk_wgmma_m64n<N>k32_f32_<t>_<t>_ss_kk` leaf: `d, a-desc, b-desc, scale-d, 1, 1`, with N/2 `"+f"` D operands. */
function defineWgmmaFp8Wrapper(atom: WarpGemmAtom, target: Target): FunctionDef {
  return defineByteWgmmaWrapper(atom, target, {
    accumulator: 'f32',
    immediates: ', 1, 1',
    note: 'K-major A and B (no trans immediates), scale-a/b 1',
  });
}
