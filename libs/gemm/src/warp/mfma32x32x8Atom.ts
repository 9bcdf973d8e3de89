import { defineFunction, float32, pointer, uint32, type FunctionDef, type Target } from '@tilekit/codegen';
import type { DTypeName } from '@tilekit/numeric';
import { mfmaAtoms } from '@tilekit/tile';
import { ptxInputType } from './ptxInputType.ts';
import { WarpGemmAtom } from './warpGemmAtom.ts';

/**
 * `v_mfma_f32_32x32x8f16` (and `v_mfma_f32_32x32x8bf16_1k` for bf16) for one wave64 (gfx942,
 * CDNA3), with the fragments of `mfmaAtoms('32x32x8', dtype)`. Emitted through the clang builtin
 * `__builtin_amdgcn_mfma_f32_32x32x8f16` (`..._32x32x8bf16_1k`) so the file stays self-contained
 * HIP. Wrapper: `void tk_mfma_f32_32x32x8_<t>(float* d, const unsigned int* a, const unsigned int*
 * b, const float* c)`: a/b the 2 packed registers (4 halves) per lane, c/d the 16 floats.
 */
export function mfma32x32x8Atom(dtype: DTypeName): WarpGemmAtom {
  ptxInputType('mfma 32x32x8', dtype);
  const frags = mfmaAtoms('32x32x8', dtype);
  const t = dtype === 'fp16' ? 'f16' : 'bf16';
  const builtin = dtype === 'fp16' ? '__builtin_amdgcn_mfma_f32_32x32x8f16' : '__builtin_amdgcn_mfma_f32_32x32x8bf16_1k';
  const lane = dtype === 'fp16' ? '_Float16' : 'short';
  return new WarpGemmAtom({
    kind: 'mfma',
    instruction: dtype === 'fp16' ? 'v_mfma_f32_32x32x8f16' : 'v_mfma_f32_32x32x8bf16_1k',
    targets: ['gfx942'],
    aType: dtype,
    bType: dtype,
    accType: 'fp32',
    m: frags.m,
    n: frags.n,
    k: frags.k,
    threads: 64,
    aSource: 'registers',
    bSource: 'registers',
    a: frags.a,
    b: frags.b,
    c: frags.c,
    wrapperName: `tk_mfma_f32_32x32x8_${t}`,
    reference: `AMD CDNA3 ISA "V_MFMA_F32_32X32X8F16" / clang ${builtin}; fragments ${frags.c.reference.replace(/, C\/D matrix$/, '')}`,
    define: (atom, target) => defineMfmaWrapper(atom, target, builtin, lane),
  });
}

/** The `tk_mfma_f32_32x32x8_*` leaf: packs the operands into clang vectors and calls `builtin` once. */
function defineMfmaWrapper(atom: WarpGemmAtom, target: Target, builtin: string, lane: string): FunctionDef {
  target.require('mfma');
  const na = atom.a!.registersPerThread;
  const nb = atom.b!.registersPerThread;
  const nc = atom.c.elementsPerThread;
  const perReg = 2;
  return defineFunction(
    {
      name: atom.wrapperName,
      qualifiers: target.functionQualifiers('force'),
      params: {
        d: pointer(float32),
        a: pointer(uint32, { const: true }),
        b: pointer(uint32, { const: true }),
        c: pointer(float32, { const: true }),
      },
    },
    (b) => {
      b.comment(`${atom.instruction}: D (${nc} f32) = A (${na} packed regs) * B (${nb} packed regs) + C, one wave64`);
      b.verbatim([
        `typedef ${lane} tk_in_x${na * perReg} __attribute__((ext_vector_type(${na * perReg})));`,
        `typedef unsigned int tk_u32_x${na} __attribute__((ext_vector_type(${na})));`,
        `typedef float tk_f32_x${nc} __attribute__((ext_vector_type(${nc})));`,
        `const tk_u32_x${na} a_bits = {${Array.from({ length: na }, (_, i) => `a[${i}]`).join(', ')}};`,
        `const tk_u32_x${nb} b_bits = {${Array.from({ length: nb }, (_, i) => `b[${i}]`).join(', ')}};`,
        `tk_f32_x${nc} acc;`,
        ...Array.from({ length: nc }, (_, i) => `acc[${i}] = c[${i}];`),
        `acc = ${builtin}(__builtin_bit_cast(tk_in_x${na * perReg}, a_bits), __builtin_bit_cast(tk_in_x${na * perReg}, b_bits), acc, 0, 0, 0);`,
        ...Array.from({ length: nc }, (_, i) => `d[${i}] = acc[${i}];`),
      ]);
    },
  );
}
