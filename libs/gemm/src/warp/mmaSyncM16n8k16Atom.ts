import { defineFunction, float32, pointer, uint32, type FunctionDef, type Target } from '@tilekit/codegen';
import type { DTypeName } from '@tilekit/numeric';
import { mmaSyncAtoms } from '@tilekit/tile';
import { asmOperands, asmStatement, regList } from './asmStatement.ts';
import { ptxInputType } from './ptxInputType.ts';
import { WarpGemmAtom } from './warpGemmAtom.ts';

/**
 * `mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.{f16,bf16}.f32` for one warp (sm_80 and later),
 * with the A/B/C fragments of `mmaSyncAtoms('m16n8k16', dtype)` (PTX ISA 9.7.14.5.8). Wrapper:
 * `void tk_mma_m16n8k16_f32_<t>_<t>_f32(float* d, const unsigned int* a, const unsigned int* b,
 * const float* c)`: a/b are the packed `.f16x2`/`.bf16x2` registers (4 and 2), c/d 4 floats.
 */
export function mmaSyncM16n8k16Atom(dtype: DTypeName): WarpGemmAtom {
  const t = ptxInputType('mma.sync m16n8k16', dtype);
  const frags = mmaSyncAtoms('m16n8k16', dtype);
  return new WarpGemmAtom({
    kind: 'mma.sync',
    instruction: frags.instruction,
    targets: ['sm_80', 'sm_90a'],
    aType: dtype,
    bType: dtype,
    accType: 'fp32',
    m: frags.m,
    n: frags.n,
    k: frags.k,
    threads: 32,
    aSource: 'registers',
    bSource: 'registers',
    a: frags.a,
    b: frags.b,
    c: frags.c,
    wrapperName: `tk_mma_m16n8k16_f32_${t}_${t}_f32`,
    reference: `PTX ISA 9.7.14.5.14 "mma" (#warp-level-matrix-instructions-mma); fragments ${frags.a.reference.replace(/, multiplicand A$/, '')}`,
    define: (atom, target) => defineMmaSyncWrapper(atom, target, t),
  });
}

/** The `tk_mma_m16n8k16_*` leaf: one `mma.sync` whose operand counts come from the atom's fragments. */
function defineMmaSyncWrapper(atom: WarpGemmAtom, target: Target, t: string): FunctionDef {
  target.require('mma-sync');
  const na = atom.a!.registersPerThread;
  const nb = atom.b!.registersPerThread;
  const nc = atom.c.elementsPerThread;
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
      b.comment(`${atom.instruction}: D (${nc} f32) = A (${na} x .${t}x2) * B (${nb} x .${t}x2) + C`);
      b.verbatim(
        asmStatement(
          [`${atom.instruction} ${regList(0, nc)}, ${regList(nc, na)}, ${regList(nc + na, nb)}, ${regList(nc + na + nb, nc)};`],
          asmOperands('=f', 'd', nc),
          [...asmOperands('r', 'a', na), ...asmOperands('r', 'b', nb), ...asmOperands('f', 'c', nc)],
        ),
      );
    },
  );
}
