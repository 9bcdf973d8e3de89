import { gfx942, kernelParam, KernelSignature, sm90a, SourceBuilder } from '@tilekit/codegen';
import { makeNaiveTensorDescriptor, symbol } from '@tilekit/layout';
import { makeTensorView } from '@tilekit/tile';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MfmaBlockGemmPolicyError } from '../block/blockGemmMfma.ts';
import { referenceGemm } from '../reference/referenceGemm.ts';
import { MfmaLdsPipeline, type MfmaLdsPipelinePolicy } from './mfmaLdsPipeline.ts';

const small: MfmaLdsPipelinePolicy = { dtype: 'fp16', tileM: 64, tileN: 64, tileK: 32, warpsM: 2, warpsN: 2 };

describe('MfmaLdsPipeline (gfx942: global → registers → swizzled LDS → MFMA, next K tile prefetched)', () => {
  it('the TS model of the whole program equals referenceGemm on ragged M/N/K, for 8-wide and scalar loads', () => {
    const pipe = new MfmaLdsPipeline(small);
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 150 }),
        fc.integer({ min: 1, max: 150 }),
        fc.integer({ min: 1, max: 80 }),
        fc.boolean(),
        fc.integer({ min: 0, max: 1000 }),
        (m, n, kRaw, vectors, seed) => {
          const v = vectors ? 8 : 1;
          const k = vectors ? 8 * Math.ceil(kRaw / 8) : kRaw;
          const lda = k + (vectors ? 8 : 3);
          const ldb = k + (vectors ? 0 : 1);
          const ldc = n + 2;
          const A = Array.from({ length: m * lda }, (_, i) => ((i * 7 + seed) % 9) - 4);
          const B = Array.from({ length: n * ldb }, (_, i) => ((i * 5 + seed * 3) % 7) - 3);
          const sm = symbol('m');
          const sn = symbol('n');
          const sk = symbol('k', { multipleOf: v });
          const bindings = { m, n, k, lda, ldb, ldc };
          const aDesc = makeNaiveTensorDescriptor([sm, sk], [symbol('lda', { multipleOf: v }), 1], { vectorLength: v });
          const bDesc = makeNaiveTensorDescriptor([sn, sk], [symbol('ldb', { multipleOf: v }), 1], { vectorLength: v });
          const cDesc = makeNaiveTensorDescriptor([sm, sn], [symbol('ldc'), 1]);
          const C = new Array<number>(m * ldc).fill(-999);
          for (let pid = 0; pid < pipe.gridSize(m, n); pid++) {
            pipe.evaluate({
              a: { descriptor: aDesc, memory: A },
              b: { descriptor: bDesc, memory: B },
              c: { descriptor: cDesc, memory: C },
              bindings,
              k,
              pid,
              n,
              vector: { a: v, b: v },
            });
          }
          const ref = referenceGemm({ m, n, k, a: { data: A, layout: 'row', stride: lda }, b: { data: B, layout: 'col', stride: ldb } });
          for (let i = 0; i < m; i++) {
            for (let j = 0; j < ldc; j++) {
              const want = j < n ? ref[i * n + j] : -999;
              if (C[i * ldc + j] !== want) throw new Error(`C[${i}][${j}] = ${C[i * ldc + j]}, want ${want} (m ${m} n ${n} k ${k})`);
            }
          }
        },
      ),
      { numRuns: 12 },
    );
  });

  it('partition: block x → (x / tilesN, x mod tilesN); grid ⌈M/tileM⌉·⌈N/tileN⌉', () => {
    const pipe = new MfmaLdsPipeline({ ...small, tileM: 256, tileN: 128 });
    expect(pipe.gridSize(257, 129)).toBe(2 * 2);
    expect(pipe.tileOf(3, 129)).toEqual([1, 1]);
    expect(pipe.ldsBytes).toBe((256 + 128) * 32 * 2);
    expect(pipe.threads).toBe(256);
  });

  it('rejects tiles the load distribution cannot cover and bad vector widths, naming them', () => {
    expect(() => new MfmaLdsPipeline({ ...small, tileK: 16 })).toThrow(/tileM.*rows/);
    expect(() => new MfmaLdsPipeline(small).dramEncoding('a', 3)).toThrow(MfmaBlockGemmPolicyError);
    expect(() => new MfmaLdsPipeline(small).dramEncoding('b', 16)).toThrow(/vector/);
  });

  it('emits HIP: prologue, a K loop from 1 with loads before the MFMAs and two barriers, a tail, a predicated C store', () => {
    const pipe = new MfmaLdsPipeline(small);
    const src = new SourceBuilder({ dialect: gfx942, header: 'mfma pipeline' });
    const half = gfx942.dtypeType('fp16');
    const sig = new KernelSignature('gemm_probe', gfx942, {
      a: kernelParam.pointer(half, { const: true, align: 16 }),
      b: kernelParam.pointer(half, { const: true, align: 16 }),
      c: kernelParam.pointer(half, { align: 8 }),
      m: kernelParam.i32({ range: [1, 1 << 20] }),
      n: kernelParam.i32({ range: [1, 1 << 20] }),
      k: kernelParam.i32({ range: [1, 1 << 20] }),
    });
    sig.defineEntry(src, { launchBounds: { maxThreads: pipe.threads } }, (b, p) => {
      const [m, n, k] = [symbol('m'), symbol('n', { multipleOf: 4 }), symbol('k', { multipleOf: 8 })];
      pipe.emit(b, gfx942, {
        a: makeTensorView(p.a, makeNaiveTensorDescriptor([m, k], [k, 1], { vectorLength: 8 }), { elementBytes: 2 }),
        b: makeTensorView(p.b, makeNaiveTensorDescriptor([n, k], [k, 1], { vectorLength: 8 }), { elementBytes: 2 }),
        c: makeTensorView(p.c, makeNaiveTensorDescriptor([m, n], [n, 1], { vectorLength: 4 }), { elementBytes: 2 }),
        m: p.m,
        n: p.n,
        k: p.k,
        symbols: { m: p.m, n: p.n, k: p.k },
      });
    });
    const text = src.render();
    const loop = text.indexOf('for (int kt = 1; kt < k_tiles; ++kt)');
    expect(loop).toBeGreaterThan(0);
    const body = text.slice(loop);
    // In the loop: the next tile's 16-byte global loads come before the first MFMA, then barrier, LDS store, barrier.
    expect(body.indexOf('tk_vec<_Float16, 8>*>(&a[')).toBeLessThan(body.indexOf('tk_mfma_f32_32x32x8_f16('));
    expect(text.match(/tk_syncthreads\(\);/g)).toHaveLength(3);
    expect(text.match(/tk_mfma_f32_32x32x8_f16\(&acc/g)).toHaveLength(2 * 2 * 2);
    expect(text).toContain('tk_vec<_Float16, 4>');
    expect(text).toContain('__builtin_amdgcn_s_barrier();');
    // The LDS windows have a fixed origin: every LDS access is unpredicated (`inside = true`), no
    // origin variables for them; only the global A/B loads (ragged M/N/K) and C stores keep checks.
    const guards = [...text.matchAll(/const bool (inside\w*) = ([^;]*);\s*if \(\1\) \{\s*([^\n]*)/g)].map((g) => ({
      pred: g[2]!,
      first: g[3]!,
    }));
    const ldsGuards = guards.filter((g) => /_lds\[|a_frag|b_frag|tk_vec<_Float16, 8> vec;/.test(g.first) && !/&(a|b)\[/.test(g.first));
    expect(ldsGuards.length).toBeGreaterThan(0);
    for (const g of ldsGuards) expect(g.pred, g.first).toBe('true');
    expect(guards.filter((g) => g.pred !== 'true').every((g) => /<= (m|n|k)\b/.test(g.pred))).toBe(true);
    expect(text.match(/int origin\w* = /g)).toHaveLength(4 + 2); // A and B global windows (2 dims each) + C
    expect(() => pipe.emit(undefined as never, sm90a, undefined as never)).toThrow(/mfma/);
  });
});
