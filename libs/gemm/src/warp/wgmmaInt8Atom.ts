import type { FunctionDef, Target } from '@tilekit/codegen';
import { wgmmaAccumulatorAtom } from '@tilekit/tile';
import { WarpGemmAtomError } from '../errors.ts';
import { checkByteWgmmaOperands, defineByteWgmmaWrapper } from './byteWgmmaForm.ts';
import { WarpGemmAtom } from './warpGemmAtom.ts';
import type { WgmmaAtomSpec } from './wgmmaAtom.ts';

/**
 * The N values of `wgmma.mma_async.sync.aligned.m64nNk32.s32.s8.s8` (PTX ISA 9.7.15.5.2, the
 * "Integer type" `.shape` list): 8, 16, 24, then every multiple of 16 from 32 to 256.
 */
export const wgmmaInt8Ns: readonly number[] = Object.freeze([8, 16, 24, ...Array.from({ length: 15 }, (_, i) => 32 + 16 * i)]);

/**
 * `wgmma.mma_async.sync.aligned.m64nNk32.s32.s8.s8` (the `.dtype = .s32` integer form, PTX ISA
 * 9.7.15.5.2) for one warpgroup: A (64×32) and B (32×N) int8 from shared memory through matrix
 * descriptors, both K-major — the integer form has no imm-trans-a/b (transpose exists only for
 * .f16/.bf16) and no imm-scale-a/b (negation is for the float forms), so its operand list is just
 * `d, a-desc, b-desc, scale-d`. D is N/2 int32 registers per thread laid out like the f32 D
 * (`wgmmaAccumulatorAtom({ n, dtype: 'int32' })`). Wrapper: `void
 * tk_wgmma_m64n<N>k32_s32_s8_s8_ss_kk(int* d, unsigned long long desc_a, unsigned long long desc_b,
 * int scale_d)`: D = A·B + (scale_d ? D : 0), wrapping on overflow (no `.satfinite`).
 * Anything else (MN-major, A in registers, an N outside {@link wgmmaInt8Ns}) is a `WarpGemmAtomError`.
 */
export function wgmmaInt8Atom(spec: WgmmaAtomSpec): WarpGemmAtom {
  const { n } = spec;
  checkWgmmaInt8Spec(spec);
  const c = wgmmaAccumulatorAtom({ n, dtype: 'int32' });
  return new WarpGemmAtom({
    kind: 'wgmma',
    instruction: `wgmma.mma_async.sync.aligned.m64n${n}k32.s32.s8.s8`,
    targets: ['sm_90a'],
    aType: 'int8',
    bType: 'int8',
    accType: 'int32',
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
    wrapperName: `tk_wgmma_m64n${n}k32_s32_s8_s8_ss_kk`,
    reference: `PTX ISA 9.7.15.5.2 "wgmma.mma_async" (integer type; descriptors 9.7.15.5.1.2.2); D: ${c.reference}`,
    define: defineWgmmaInt8Wrapper,
  });
}

/** Checks an int8 wgmma spec in order: n among the integer shapes, A from shared memory, both operands K-major. */
function checkWgmmaInt8Spec(spec: WgmmaAtomSpec): void {
  const { n } = spec;
  if (!wgmmaInt8Ns.includes(n))
    throw new WarpGemmAtomError('wgmma m64nNk32 int8', `n must be one of ${wgmmaInt8Ns.join(', ')} (the integer shapes)`, String(n));
  checkByteWgmmaOperands(spec, 'int8');
}

/** The `tk_wgmma_m64n<N>k32_s32_s8_s8_ss_kk` leaf: `d, a-desc, b-desc, scale-d`, with N/2 `"+r"` D operands. */
function defineWgmmaInt8Wrapper(atom: WarpGemmAtom, target: Target): FunctionDef {
  return defineByteWgmmaWrapper(atom, target, { accumulator: 's32', immediates: '', note: 'K-major A and B (no trans/scale immediates)' });
}
