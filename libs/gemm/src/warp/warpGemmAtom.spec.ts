import { gfx942, host, renderFunction, sm80, sm90a } from '@tilekit/codegen';
import { mfmaAtoms, mmaSyncAtoms, wgmmaAccumulatorAtom } from '@tilekit/tile';
import { fragmentTableViolation } from '@tilekit/tile/testing';
import { describe, expect, it } from 'vitest';
import { WarpGemmAtomError, WarpGemmSelectionError } from '../errors.ts';
import { selectWarpGemmAtom } from './selectWarpGemmAtom.ts';
import fc from 'fast-check';
import {
  defineWgmmaCommitGroup,
  defineWgmmaFence,
  defineWgmmaFenceOperands,
  defineWgmmaWaitGroup,
  mfma32x32x8Atom,
  mmaSyncM16n8k16Atom,
  wgmmaAtom,
  wgmmaRegisterAFragment,
} from './index.ts';
import { wgmmaInt8Ns } from './wgmmaInt8Atom.ts';

/** The `%n` operands an asm template names, and the constraint strings of its operand lists. */
function asmShape(text: string): { placeholders: number; constraints: string[] } {
  const placeholders = new Set([...text.matchAll(/%(\d+)/g)].map((m) => Number(m[1]))).size;
  const constraints = [...text.matchAll(/"([=+]?[a-z])"\(/g)].map((m) => m[1]!);
  return { placeholders, constraints };
}

const count = (xs: readonly string[], c: string): number => xs.filter((x) => x === c).length;

describe('warp GEMM atoms pair an instruction with the @tilekit/tile fragments', () => {
  for (const dtype of ['fp16', 'bf16'] as const) {
    const t = dtype === 'fp16' ? 'f16' : 'bf16';

    it(`mma.sync m16n8k16 ${dtype}: fragments are tile's, wrapper has 4 D, 4 A, 2 B, 4 C operands`, () => {
      const atom = mmaSyncM16n8k16Atom(dtype);
      const ref = mmaSyncAtoms('m16n8k16', dtype);
      expect(atom.instruction).toBe(`mma.sync.aligned.m16n8k16.row.col.f32.${t}.${t}.f32`);
      expect(atom.a!.encoding.toSpec()).toEqual(ref.a.encoding.toSpec());
      expect(atom.b!.encoding.toSpec()).toEqual(ref.b.encoding.toSpec());
      expect(atom.c.encoding.toSpec()).toEqual(ref.c.encoding.toSpec());
      expect([atom.m, atom.n, atom.k, atom.threads]).toEqual([16, 8, 16, 32]);
      expect(atom.targets).toEqual(['sm_80', 'sm_90a']);
      for (const target of [sm80, sm90a]) {
        const text = renderFunction(atom.defineWrapper(target));
        expect(text).toContain(
          `__device__ __forceinline__ void tk_mma_m16n8k16_f32_${t}_${t}_f32(float* d, const unsigned int* a, const unsigned int* b, const float* c)`,
        );
        expect(text).toContain(`${atom.instruction} {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};`);
        const s = asmShape(text);
        expect(s.placeholders).toBe(14);
        expect([count(s.constraints, '=f'), count(s.constraints, 'r'), count(s.constraints, 'f')]).toEqual([4, 6, 4]);
      }
      expect(() => atom.defineWrapper(gfx942)).toThrow(WarpGemmAtomError);
    });

    it(`wgmma m64nNk16 ${dtype}: D is tile's wgmma accumulator, A/B by descriptor, N/2 "+f" operands`, () => {
      for (const n of [8, 64, 128, 256]) {
        const atom = wgmmaAtom({ n, dtype });
        expect(atom.c.encoding.toSpec()).toEqual(wgmmaAccumulatorAtom({ n }).encoding.toSpec());
        expect([atom.a, atom.b, atom.aSource, atom.bSource]).toEqual([null, null, 'shared', 'shared']);
        expect([atom.m, atom.n, atom.k, atom.threads, atom.c.elementsPerThread]).toEqual([64, n, 16, 128, n / 2]);
        const text = renderFunction(atom.defineWrapper(sm90a));
        expect(text).toContain(
          `void tk_wgmma_m64n${n}k16_f32_${t}_${t}_ss_kk(float* d, unsigned long long desc_a, unsigned long long desc_b, int scale_d)`,
        );
        expect(text).toContain(`wgmma.mma_async.sync.aligned.m64n${n}k16.f32.${t}.${t} {%0,`);
        expect(text).toContain(`%${n / 2}, %${n / 2 + 1}, p, 1, 1, 0, 0;`);
        const s = asmShape(text);
        expect(s.placeholders).toBe(n / 2 + 3);
        expect([count(s.constraints, '+f'), count(s.constraints, 'l'), count(s.constraints, 'r')]).toEqual([n / 2, 2, 1]);
      }
      const mn = renderFunction(wgmmaAtom({ n: 64, dtype, aMajor: 'MN', bMajor: 'MN' }).defineWrapper(sm90a));
      expect(mn).toContain('p, 1, 1, 1, 1;');
      expect(mn).toContain(`tk_wgmma_m64n64k16_f32_${t}_${t}_ss_mn(`);
      // One operand transposed: the immediates follow the operand, the K-major one stays 0.
      for (const [aMajor, bMajor, imm, suffix] of [
        ['MN', 'K', '1, 0', 'mk'],
        ['K', 'MN', '0, 1', 'kn'],
      ] as const) {
        const atom = wgmmaAtom({ n: 256, dtype, aMajor, bMajor });
        expect([atom.aMajor, atom.bMajor, atom.wrapperName]).toEqual([aMajor, bMajor, `tk_wgmma_m64n256k16_f32_${t}_${t}_ss_${suffix}`]);
        expect(renderFunction(atom.defineWrapper(sm90a))).toContain(`%128, %129, p, 1, 1, ${imm};`);
      }
      expect([wgmmaAtom({ n: 64, dtype }).aMajor, wgmmaAtom({ n: 64, dtype }).bMajor]).toEqual(['K', 'K']);
      expect(() => wgmmaAtom({ n: 64, dtype }).defineWrapper(sm80)).toThrow(/target must be one of sm_90a \(got sm_80\)/);
      expect(() => wgmmaAtom({ n: 12, dtype })).toThrow(/multiple of 8/);
    });

    it(`mfma 32x32x8 ${dtype}: tile's MFMA fragments, clang builtin, 16 accumulators`, () => {
      const atom = mfma32x32x8Atom(dtype);
      const ref = mfmaAtoms('32x32x8', dtype);
      expect(atom.a!.encoding.toSpec()).toEqual(ref.a.encoding.toSpec());
      expect(atom.c.encoding.toSpec()).toEqual(ref.c.encoding.toSpec());
      expect([atom.m, atom.n, atom.k, atom.threads, atom.c.elementsPerThread, atom.a!.registersPerThread]).toEqual([32, 32, 8, 64, 16, 2]);
      const text = renderFunction(atom.defineWrapper(gfx942));
      expect(text).toContain(dtype === 'fp16' ? '__builtin_amdgcn_mfma_f32_32x32x8f16(' : '__builtin_amdgcn_mfma_f32_32x32x8bf16_1k(');
      expect(text).toContain('d[15] = acc[15];');
      expect(() => atom.defineWrapper(sm90a)).toThrow(WarpGemmAtomError);
    });
  }

  it('the wgmma D fragment is Figure 149 of PTX ISA 9.7.15.5.1.1.1 (cross-check of the pairing)', () => {
    const atom = wgmmaAtom({ n: 32, dtype: 'fp16' });
    const cell = (thread: number, i: number): [number, number] => {
      const w = thread >> 5;
      const lane = thread % 32;
      return [16 * w + (lane >> 2) + 8 * ((i >> 1) & 1), 8 * (i >> 2) + 2 * (lane % 4) + (i & 1)];
    };
    expect(fragmentTableViolation(atom.c, cell)).toBeUndefined();
  });

  it('wgmma with A in registers: Figure 148 fragment (4 warps × the mma.sync A fragment), {a0..a3} operands, trans-b only', () => {
    for (const dtype of ['fp16', 'bf16'] as const) {
      const fragA = wgmmaRegisterAFragment(dtype);
      const cell = (thread: number, i: number): [number, number] => {
        const w = thread >> 5;
        const lane = thread % 32;
        return [16 * w + (lane >> 2) + 8 * ((i >> 1) & 1), 2 * (lane % 4) + (i & 1) + 8 * (i >> 2)];
      };
      expect(fragmentTableViolation(fragA, cell)).toBeUndefined();
      expect([fragA.threads, fragA.elementsPerThread, fragA.registersPerThread, ...fragA.shape]).toEqual([128, 8, 4, 64, 16]);
      const atom = wgmmaAtom({ n: 128, dtype, aSource: 'registers', bMajor: 'MN' });
      expect(atom.a!.encoding.toSpec()).toEqual(fragA.encoding.toSpec());
      const t = dtype === 'fp16' ? 'f16' : 'bf16';
      const text = renderFunction(atom.defineWrapper(sm90a));
      expect(text).toContain(
        `void tk_wgmma_m64n128k16_f32_${t}_${t}_rs_kn(float* d, const unsigned int* a, unsigned long long desc_b, int scale_d)`,
      );
      expect(text).toContain('{%64, %65, %66, %67}, %68, p, 1, 1, 1;');
      expect(text).toContain('setp.ne.b32 p, %69, 0;');
      const s = asmShape(text);
      expect([s.placeholders, count(s.constraints, '+f'), count(s.constraints, 'r'), count(s.constraints, 'l')]).toEqual([70, 64, 5, 1]);
    }
    expect(() => wgmmaAtom({ n: 64, dtype: 'fp16', aSource: 'registers', aMajor: 'MN' })).toThrow(/A in registers is K-major/);
  });

  it('fence / commit_group / wait_group are single-instruction leaves with a memory clobber (sm_90a only)', () => {
    expect(renderFunction(defineWgmmaFence(sm90a))).toContain('"wgmma.fence.sync.aligned;\\n"');
    expect(renderFunction(defineWgmmaCommitGroup(sm90a))).toContain('"wgmma.commit_group.sync.aligned;\\n"');
    const wait = renderFunction(defineWgmmaWaitGroup(sm90a, 1));
    expect(wait).toContain('void tk_wgmma_wait_group_1()');
    expect(wait).toContain('"wgmma.wait_group.sync.aligned 1;\\n"');
    expect(wait).toContain(': "memory"');
    expect(() => defineWgmmaFence(sm80)).toThrow(/wgmma/);
    expect(() => defineWgmmaWaitGroup(sm90a, 8)).toThrow(/\[0, 7\]/);
    expect(() => defineWgmmaFence(host)).toThrow();
    const pin = renderFunction(defineWgmmaFenceOperands(sm90a, 64));
    expect(pin).toContain('void tk_wgmma_fence_operands_64(float* d)');
    expect(asmShape(pin).constraints).toEqual(Array.from({ length: 64 }, () => '+f'));
    expect(pin).toMatch(/asm volatile\(\n\s+""\n/);
    expect(() => defineWgmmaFenceOperands(sm90a, 0)).toThrow(/count/);
  });
});

describe('wgmma m64nNk32.s32.s8.s8 (int8 · int8 → int32, A and B K-major from shared memory)', () => {
  it('the integer shapes\' N: 8, 16, 24, then multiples of 16 up to 256 (PTX ISA "Integer type" .shape list)', () => {
    expect(wgmmaInt8Ns).toEqual([8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256]);
  });

  it('for every valid N: k32, an int32 D laid out as the f32 D (N/2 registers), a wrapper with N/2 "+r" D operands, two descriptors and scale-d only', () => {
    fc.assert(
      fc.property(fc.constantFrom(...wgmmaInt8Ns), (n) => {
        const atom = wgmmaAtom({ n, dtype: 'int8', aMajor: 'K', bMajor: 'K' });
        expect([atom.m, atom.n, atom.k, atom.threads, atom.aType, atom.bType, atom.accType]).toEqual([
          64,
          n,
          32,
          128,
          'int8',
          'int8',
          'int32',
        ]);
        expect(atom.instruction).toBe(`wgmma.mma_async.sync.aligned.m64n${n}k32.s32.s8.s8`);
        expect([atom.a, atom.b, atom.aSource, atom.bSource, atom.aMajor, atom.bMajor]).toEqual([null, null, 'shared', 'shared', 'K', 'K']);
        expect(atom.c.encoding.equals(wgmmaAccumulatorAtom({ n }).encoding)).toBe(true);
        expect([atom.c.dtype, atom.c.elementsPerThread, atom.c.registersPerThread]).toEqual(['int32', n / 2, n / 2]);
        const text = renderFunction(atom.defineWrapper(sm90a));
        expect(text).toContain(
          `void tk_wgmma_m64n${n}k32_s32_s8_s8_ss_kk(int* d, unsigned long long desc_a, unsigned long long desc_b, int scale_d)`,
        );
        const nd = n / 2;
        // No imm-scale-a/b, no imm-trans-a/b: the operand list ends at the scale-d predicate.
        expect(text).toContain(`, %${nd}, %${nd + 1}, p;`);
        expect(text).toContain(`setp.ne.b32 p, %${nd + 2}, 0;`);
        const sh = asmShape(text);
        expect([
          sh.placeholders,
          count(sh.constraints, '+r'),
          count(sh.constraints, '+f'),
          count(sh.constraints, 'l'),
          count(sh.constraints, 'r'),
        ]).toEqual([nd + 3, nd, 0, 2, 1]);
      }),
      { numRuns: 18 },
    );
  });

  it('typed errors: MN-major, A in registers, N outside the integer shapes, any target but sm_90a', () => {
    expect(() => wgmmaAtom({ n: 64, dtype: 'int8', aMajor: 'MN' })).toThrow(WarpGemmAtomError);
    expect(() => wgmmaAtom({ n: 64, dtype: 'int8', aMajor: 'MN' })).toThrow(/wgmma int8 aMajor: must be "K"/);
    expect(() => wgmmaAtom({ n: 64, dtype: 'int8', bMajor: 'MN' })).toThrow(/wgmma int8 bMajor: must be "K"/);
    expect(() => wgmmaAtom({ n: 64, dtype: 'int8', aSource: 'registers' })).toThrow(/wgmma int8 aSource: must be "shared"/);
    for (const n of [40, 56, 72, 248, 264, 0, 12])
      expect(() => wgmmaAtom({ n, dtype: 'int8' }), `N = ${n}`).toThrow(/n must be one of 8, 16, 24, 32, 48/);
    expect(() => wgmmaAtom({ n: 64, dtype: 'int8' }).defineWrapper(sm80)).toThrow(WarpGemmAtomError);
    expect(() => wgmmaAtom({ n: 64, dtype: 'uint8' })).toThrow(/fp16 or bf16/);
  });

  it('the int32 operand pin: tk_wgmma_fence_operands_s32_<count>(int* d) with "+r"; fp32 stays "+f" under its old name', () => {
    const pin = renderFunction(defineWgmmaFenceOperands(sm90a, 64, 'int32'));
    expect(pin).toContain('void tk_wgmma_fence_operands_s32_64(int* d)');
    expect(asmShape(pin).constraints).toEqual(Array.from({ length: 64 }, () => '+r'));
    expect(renderFunction(defineWgmmaFenceOperands(sm90a, 64, 'fp32'))).toBe(renderFunction(defineWgmmaFenceOperands(sm90a, 64)));
    expect(() => defineWgmmaFenceOperands(sm90a, 64, 'fp16')).toThrow(/accType: must be fp32 or int32/);
  });
});

describe('selectWarpGemmAtom: explicit predicates, a reason for every rejection', () => {
  it('picks the one atom a (dtypes, shape, target) names', () => {
    const w = selectWarpGemmAtom({ aType: 'bf16', bType: 'bf16', accType: 'fp32', target: sm90a, m: 64, n: 128, k: 16 });
    expect([w.kind, w.n, w.aType]).toEqual(['wgmma', 128, 'bf16']);
    const m = selectWarpGemmAtom({ aType: 'fp16', bType: 'fp16', accType: 'fp32', target: 'sm_80', m: 16, n: 8, k: 16 });
    expect([m.kind, m.instruction]).toEqual(['mma.sync', 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32']);
    expect(selectWarpGemmAtom({ aType: 'fp16', bType: 'fp16', accType: 'fp32', target: 'sm_90a', m: 16, n: 8, k: 16 }).kind).toBe(
      'mma.sync',
    );
    expect(selectWarpGemmAtom({ aType: 'fp16', bType: 'fp16', accType: 'fp32', target: gfx942, m: 32, n: 32, k: 8 }).instruction).toBe(
      'v_mfma_f32_32x32x8f16',
    );
    const rs = selectWarpGemmAtom({
      aType: 'fp16',
      bType: 'fp16',
      accType: 'fp32',
      target: sm90a,
      m: 64,
      n: 64,
      k: 16,
      aSource: 'registers',
    });
    expect([rs.kind, rs.aSource, rs.a?.threads]).toEqual(['wgmma', 'registers', 128]);
    expect(() =>
      selectWarpGemmAtom({ aType: 'fp16', bType: 'fp16', accType: 'fp32', target: sm80, m: 16, n: 8, k: 16, aSource: 'shared' }),
    ).toThrow(/reads A from registers, not shared/);
  });

  it('exactly one family matches each supported query', () => {
    const targets = ['sm_80', 'sm_90a', 'gfx942'] as const;
    const shapes = [
      [16, 8, 16],
      [32, 32, 8],
      [64, 8, 16],
      [64, 256, 16],
      [64, 136, 16],
    ] as const;
    for (const target of targets)
      for (const [m, n, k] of shapes)
        for (const dtype of ['fp16', 'bf16'] as const) {
          const q = { aType: dtype, bType: dtype, accType: 'fp32' as const, target, m, n, k };
          const expectKind =
            m === 16 && target !== 'gfx942'
              ? 'mma.sync'
              : m === 32 && target === 'gfx942'
                ? 'mfma'
                : m === 64 && target === 'sm_90a'
                  ? 'wgmma'
                  : null;
          if (expectKind === null) expect(() => selectWarpGemmAtom(q)).toThrow(WarpGemmSelectionError);
          else expect(selectWarpGemmAtom(q).kind).toBe(expectKind);
        }
  });

  it('when nothing matches, the error lists each candidate with the predicate it failed', () => {
    let err: WarpGemmSelectionError | undefined;
    try {
      selectWarpGemmAtom({ aType: 'fp16', bType: 'fp16', accType: 'fp32', target: 'sm_80', m: 64, n: 128, k: 16 });
    } catch (e) {
      err = e as WarpGemmSelectionError;
    }
    expect(err).toBeInstanceOf(WarpGemmSelectionError);
    expect(err!.code).toBe('gemm/no-warp-gemm-atom');
    expect(err!.rejections).toContainEqual({ atom: 'wgmma.m64nNk16 fp16', reason: 'needs target sm_90a, not sm_80' });
    expect(err!.rejections).toContainEqual({ atom: 'mma.sync.m16n8k16 fp16', reason: 'shape must be 16×8×16, not 64×128×16' });
    expect(err!.rejections).toContainEqual({ atom: 'mma.sync.m16n8k16 bf16', reason: 'needs A and B of bf16, not fp16 and fp16' });
    expect(err!.rejections).toHaveLength(6);
    expect(err!.message).toMatch(/no warp GEMM atom matches \{ a: fp16, b: fp16, acc: fp32, target: sm_80, 64×128×16 \}/);
    expect(() => selectWarpGemmAtom({ aType: 'fp16', bType: 'fp16', accType: 'fp16', target: 'sm_90a', m: 64, n: 64, k: 16 })).toThrow(
      /accumulates in fp32, not fp16/,
    );
    expect(() =>
      selectWarpGemmAtom({ aType: 'fp8e4m3fn', bType: 'fp8e4m3fn', accType: 'fp32', target: 'sm_90a', m: 64, n: 64, k: 32 }),
    ).toThrow(/needs A and B of fp16/);
    expect(() => selectWarpGemmAtom({ aType: 'fp16', bType: 'bf16', accType: 'fp32', target: 'sm_90a', m: 64, n: 64, k: 16 })).toThrow(
      WarpGemmSelectionError,
    );
  });
});
