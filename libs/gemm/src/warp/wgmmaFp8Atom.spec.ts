import { gfx942, renderFunction, sm80, sm90a } from '@tilekit/codegen';
import { wgmmaAccumulatorAtom } from '@tilekit/tile';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { WarpGemmAtomError } from '../errors.ts';
import { wgmmaAtom, wgmmaFp8Atom, wgmmaFp8Ns } from './index.ts';

/** The `%n` operands an asm template names, and the constraint strings of its operand lists. */
function asmShape(text: string): { placeholders: number; constraints: string[] } {
  const placeholders = new Set([...text.matchAll(/%(\d+)/g)].map((m) => Number(m[1]))).size;
  const constraints = [...text.matchAll(/"([=+]?[a-z])"\(/g)].map((m) => m[1]!);
  return { placeholders, constraints };
}

const count = (xs: readonly string[], c: string): number => xs.filter((x) => x === c).length;

const fp8 = [
  ['fp8e4m3fn', 'e4m3'],
  ['fp8e5m2', 'e5m2'],
] as const;

describe('wgmma m64nNk32.f32.e4m3.e4m3 / .e5m2.e5m2 (fp8 · fp8 → fp32, A and B K-major from shared memory)', () => {
  it('the FP8 shapes\' N: every multiple of 8 from 8 to 256 (PTX ISA "FP8 floating point type" .shape list)', () => {
    expect(wgmmaFp8Ns).toEqual(Array.from({ length: 32 }, (_, i) => 8 * (i + 1)));
    expect(Object.isFrozen(wgmmaFp8Ns)).toBe(true);
  });

  for (const [dtype, t] of fp8) {
    it(`${dtype}, every valid N: k32, the bf16 f32 D (N/2 registers), a wrapper with N/2 "+f" D operands, two descriptors, scale-d, imm-scale 1, 1`, () => {
      fc.assert(
        fc.property(fc.constantFrom(...wgmmaFp8Ns), (n) => {
          const atom = wgmmaAtom({ n, dtype, aMajor: 'K', bMajor: 'K' });
          expect([atom.kind, atom.m, atom.n, atom.k, atom.threads, atom.aType, atom.bType, atom.accType]).toEqual([
            'wgmma',
            64,
            n,
            32,
            128,
            dtype,
            dtype,
            'fp32',
          ]);
          expect(atom.instruction).toBe(`wgmma.mma_async.sync.aligned.m64n${n}k32.f32.${t}.${t}`);
          expect(atom.targets).toEqual(['sm_90a']);
          expect([atom.a, atom.b, atom.aSource, atom.bSource, atom.aMajor, atom.bMajor]).toEqual([
            null,
            null,
            'shared',
            'shared',
            'K',
            'K',
          ]);
          // The accumulator is exactly the bf16 wgmma's.
          const bf16 = wgmmaAtom({ n, dtype: 'bf16' });
          expect(atom.c.encoding.equals(bf16.c.encoding)).toBe(true);
          expect(atom.c.encoding.toSpec()).toEqual(wgmmaAccumulatorAtom({ n, dtype: 'fp32' }).encoding.toSpec());
          expect([atom.c.dtype, atom.c.elementsPerThread, atom.c.registersPerThread]).toEqual(['fp32', n / 2, n / 2]);
          expect(atom.wrapperName).toBe(`tk_wgmma_m64n${n}k32_f32_${t}_${t}_ss_kk`);
          const text = renderFunction(atom.defineWrapper(sm90a));
          expect(text).toContain(
            `void tk_wgmma_m64n${n}k32_f32_${t}_${t}_ss_kk(float* d, unsigned long long desc_a, unsigned long long desc_b, int scale_d)`,
          );
          expect(text).toContain(`__device__ __forceinline__ void ${atom.wrapperName}(`);
          const nd = n / 2;
          expect(text).toContain(`${atom.instruction} {%0,`);
          // d, a-desc, b-desc, scale-d, imm-scale-a, imm-scale-b — no imm-trans-a/b in the FP8 form.
          expect(text).toContain(`, %${nd}, %${nd + 1}, p, 1, 1;`);
          expect(text).not.toContain('p, 1, 1, 0');
          expect(text).toContain(`setp.ne.b32 p, %${nd + 2}, 0;`);
          const sh = asmShape(text);
          expect([
            sh.placeholders,
            count(sh.constraints, '+f'),
            count(sh.constraints, '+r'),
            count(sh.constraints, 'l'),
            count(sh.constraints, 'r'),
          ]).toEqual([nd + 3, nd, 0, 2, 1]);
          // wgmmaAtom dispatches to wgmmaFp8Atom: the same atom.
          expect(renderFunction(wgmmaFp8Atom({ n, dtype }).defineWrapper(sm90a))).toBe(text);
        }),
        { numRuns: 32 },
      );
    });
  }

  it('typed errors: MN-major, A in registers, N outside the FP8 shapes, a non-FP8 dtype, any target but sm_90a', () => {
    expect(() => wgmmaAtom({ n: 64, dtype: 'fp8e4m3fn', aMajor: 'MN' })).toThrow(WarpGemmAtomError);
    expect(() => wgmmaAtom({ n: 64, dtype: 'fp8e4m3fn', aMajor: 'MN' })).toThrow(/wgmma fp8 aMajor: must be "K"/);
    expect(() => wgmmaAtom({ n: 64, dtype: 'fp8e5m2', bMajor: 'MN' })).toThrow(/wgmma fp8 bMajor: must be "K"/);
    expect(() => wgmmaAtom({ n: 64, dtype: 'fp8e4m3fn', aSource: 'registers' })).toThrow(/wgmma fp8 aSource: must be "shared"/);
    for (const n of [0, 4, 12, 100, 264, 512, 8.5, Number.NaN])
      expect(() => wgmmaAtom({ n, dtype: 'fp8e4m3fn' }), `N = ${n}`).toThrow(/wgmma m64nNk32 fp8: n must be a multiple of 8 in \[8, 256\]/);
    // The fnuz variants are AMD's encodings: no wgmma form takes them.
    expect(() => wgmmaAtom({ n: 64, dtype: 'fp8e4m3fnuz' })).toThrow(WarpGemmAtomError);
    expect(() => wgmmaFp8Atom({ n: 64, dtype: 'bf16' })).toThrow(/input dtype must be fp8e4m3fn or fp8e5m2/);
    const atom = wgmmaAtom({ n: 64, dtype: 'fp8e4m3fn' });
    for (const target of [sm80, gfx942]) expect(() => atom.defineWrapper(target)).toThrow(WarpGemmAtomError);
  });

  it('the f16 / bf16 / int8 atoms are unchanged by the fp8 dispatch', () => {
    expect(wgmmaAtom({ n: 64, dtype: 'bf16' }).instruction).toBe('wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16');
    expect(wgmmaAtom({ n: 64, dtype: 'fp16' }).wrapperName).toBe('tk_wgmma_m64n64k16_f32_f16_f16_ss_kk');
    expect(wgmmaAtom({ n: 64, dtype: 'int8' }).wrapperName).toBe('tk_wgmma_m64n64k32_s32_s8_s8_ss_kk');
  });
});
