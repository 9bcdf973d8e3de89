import { defineFunction, float32, int32, pointer, uint64, type FunctionDef, type Target } from '@tilekit/codegen';
import { WarpGemmAtomError } from '../errors.ts';
import { asmOperands, asmStatement, regList } from './asmStatement.ts';
import type { WarpGemmAtom } from './warpGemmAtom.ts';
import type { WgmmaAtomSpec } from './wgmmaAtom.ts';

/**
 * Checks what the 1-byte wgmma forms (int8 `m64nNk32.s32.s8.s8`, fp8 `m64nNk32.f32.e4m3/e5m2`)
 * share, in order: A from shared memory (tilekit models no register-A fragment of m64nNk32), then
 * both operands K-major (neither form has imm-trans). `form` names the form in the errors.
 * @throws WarpGemmAtomError naming `wgmma <form> aSource` / `aMajor` / `bMajor`.
 */
export function checkByteWgmmaOperands(spec: WgmmaAtomSpec, form: string): void {
  const aSource = spec.aSource ?? 'shared';
  if (aSource !== 'shared')
    throw new WarpGemmAtomError(
      `wgmma ${form} aSource`,
      'must be "shared" (tilekit models no register-A fragment of m64nNk32)',
      String(aSource),
    );
  for (const [what, major] of [
    ['aMajor', spec.aMajor ?? 'K'],
    ['bMajor', spec.bMajor ?? 'K'],
  ] as const) {
    if (major !== 'K')
      throw new WarpGemmAtomError(
        `wgmma ${form} ${what}`,
        `must be "K": the ${form} wgmma has no imm-trans (transpose is .f16/.bf16 only)`,
        String(major),
      );
  }
}

/**
 * The shared-A/B leaf of a 1-byte wgmma form: `void <wrapper>(T* d, unsigned long long desc_a,
 * unsigned long long desc_b, int scale_d)` with N/2 D registers of `accumulator` (`"+r"` int for
 * s32, `"+f"` float for f32); `immediates` follow the predicate (`, 1, 1` for fp8's imm-scale-a/b,
 * none for int8), and `note` ends the comment.
 */
export function defineByteWgmmaWrapper(
  atom: WarpGemmAtom,
  target: Target,
  v: { readonly accumulator: 's32' | 'f32'; readonly immediates: string; readonly note: string },
): FunctionDef {
  target.require('wgmma');
  const { instruction } = atom;
  const nd = atom.c.elementsPerThread;
  const element = v.accumulator === 's32' ? int32 : float32;
  return defineFunction(
    {
      name: atom.wrapperName,
      qualifiers: target.functionQualifiers('force'),
      params: { d: pointer(element), desc_a: uint64, desc_b: uint64, scale_d: int32 },
    },
    (b) => {
      b.comment(`${instruction}: D (${nd} ${v.accumulator} per thread) = A[desc_a] * B[desc_b] + (scale_d ? D : 0); ${v.note}`);
      b.verbatim(
        asmStatement(
          [
            '{',
            '.reg .pred p;',
            `setp.ne.b32 p, %${nd + 2}, 0;`,
            `${instruction} ${regList(0, nd)}, %${nd}, %${nd + 1}, p${v.immediates};`,
            '}',
          ],
          asmOperands(v.accumulator === 's32' ? '+r' : '+f', 'd', nd),
          ['"l"(desc_a)', '"l"(desc_b)', '"r"(scale_d)'],
        ),
      );
    },
  );
}
