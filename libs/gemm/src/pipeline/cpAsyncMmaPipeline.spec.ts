import { int32, pointer, sm80, SourceBuilder } from '@tilekit/codegen';
import { makeNaiveTensorDescriptor, symbol } from '@tilekit/layout';
import { makeTensorView } from '@tilekit/tile';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CpAsyncMmaPipeline, type CpAsyncMmaPolicy } from './cpAsyncMmaPipeline.ts';

const policy = (extra: Partial<CpAsyncMmaPolicy> = {}): CpAsyncMmaPolicy => ({
  dtype: 'fp16',
  tileM: 128,
  tileN: 128,
  tileK: 32,
  warps: [2, 4],
  aMajor: 'K',
  bMajor: 'K',
  stages: 4,
  groupM: 8,
  ...extra,
});

function emit(p: CpAsyncMmaPipeline): string {
  const src = new SourceBuilder({ dialect: sm80 });
  const half = sm80.dtypeType('fp16');
  const max = { max: 1 << 20 };
  const operand = (major: 'K' | 'MN', mn: string, name: string) =>
    makeNaiveTensorDescriptor(
      [symbol(major === 'K' ? mn : 'k', max), symbol(`${name}_cols`, { ...max, multipleOf: 8 })],
      [symbol(`ld${name}`, { ...max, multipleOf: 8 }), 1],
      { vectorLength: 8 },
    );
  src.function(
    {
      name: 'gemm_body',
      qualifiers: sm80.kernelQualifiers(),
      params: {
        a: pointer(half, { const: true }),
        b: pointer(half, { const: true }),
        c: pointer(half),
        m: int32,
        n: int32,
        k: int32,
        lda: int32,
        ldb: int32,
        ldc: int32,
        a_cols: int32,
        b_cols: int32,
      },
    },
    (b, v) => {
      const P = p.policy;
      p.emit(b, sm80, {
        a: { view: makeTensorView(v.a, operand(P.aMajor, 'm', 'a'), { elementBytes: 2 }), contiguousLength: P.aMajor === 'K' ? v.k : v.m },
        b: { view: makeTensorView(v.b, operand(P.bMajor, 'n', 'b'), { elementBytes: 2 }), contiguousLength: P.bMajor === 'K' ? v.k : v.n },
        m: v.m,
        n: v.n,
        k: v.k,
        c: makeTensorView(v.c, makeNaiveTensorDescriptor([symbol('m', max), symbol('n', max)], [symbol('ldc', max), 1]), {
          elementBytes: 2,
        }),
        symbols: { m: v.m, n: v.n, k: v.k, lda: v.lda, ldb: v.ldb, ldc: v.ldc, a_cols: v.a_cols, b_cols: v.b_cols },
      });
    },
  );
  return src.render();
}

describe('CpAsyncMmaPipeline (sm_80 multistage cp.async → ldmatrix → mma.sync main loop)', () => {
  it('shared memory: S A stages then S B stages (+1024 alignment slack); 16-byte copy distributions cover each tile once', () => {
    const p = new CpAsyncMmaPipeline(policy());
    expect(p.threads).toBe(256);
    expect(p.bStageOffset).toBe(4 * 128 * 32 * 2);
    expect(p.usedBytes).toBe(8 * 8192);
    expect(p.sharedBytes).toBe(8 * 8192 + 1024);
    for (const enc of [p.aCopyEncoding, p.bCopyEncoding]) {
      expect(enc.numThreads).toBe(256);
      const seen = new Set<string>();
      for (let t = 0; t < 256; t++)
        for (let d = 0; d < enc.threadBufferSize; d++) seen.add(enc.calculateXIndexFromD(enc.partitionIndexOf(t), d).join(','));
      expect(seen.size).toBe(128 * 32);
    }
    const mn = new CpAsyncMmaPipeline(policy({ aMajor: 'MN' }));
    expect(mn.aCopyEncoding.xLengths).toEqual([32, 128]);
  });

  it('grouped rasterization visits every tile exactly once', () => {
    const p = new CpAsyncMmaPipeline(policy());
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 3000 }), fc.integer({ min: 1, max: 3000 }), (m, n) => {
        const seen = new Set<string>();
        for (let pid = 0; pid < p.gridSize(m, n); pid++) {
          const [tm, tn] = p.tileOf(pid, m, n);
          if (tm >= Math.ceil(m / 128) || tn >= Math.ceil(n / 128)) return false;
          seen.add(`${tm},${tn}`);
        }
        return seen.size === p.gridSize(m, n);
      }),
      { numRuns: 30 },
    );
  });

  it.each([
    ['K', 'K'],
    ['MN', 'MN'],
  ] as const)('emits the S-stage schedule with zero-filling 16-byte cp.async (A %s-major, B %s-major)', (aMajor, bMajor) => {
    const text = emit(new CpAsyncMmaPipeline(policy({ aMajor, bMajor })));
    expect(text.match(/tk_cp_async_commit_group\(\);/g)).toHaveLength(3 + 1);
    expect(text).toContain('tk_cp_async_wait_group<2>();');
    expect(text).toContain('tk_cp_async_wait_group<0>();');
    expect(text).toMatch(/tk_cp_async_wait_group<2>\(\);\s*__syncthreads\(\);/);
    expect(text).toMatch(
      /const unsigned int src_bytes\w* = inside\w* \? static_cast<unsigned int>\(\(\w+ - \(origin[^?]*< 8 \? [^:]*: 8\) \* 2\) : 0u;/,
    );
    expect(text).toMatch(/tk_cp_async_cg_16\(/);
    expect(text.match(/tk_ldmatrix_x4(_trans)?\(&/g)!.length).toBe(6 * 2);
    if (aMajor === 'MN') expect(text).toContain('tk_ldmatrix_x4_trans(&a_frag[0]');
    expect(text).toMatch(/if \(inside\w*\) \{/);
  });

  it('rejects bad stages and tiles the copy cannot split', () => {
    expect(() => new CpAsyncMmaPipeline(policy({ stages: 5 }))).toThrow(/stages/);
    expect(() => new CpAsyncMmaPipeline(policy({ groupM: 0 }))).toThrow(/groupM/);
    expect(() => new CpAsyncMmaPipeline(policy({ tileM: 32, tileN: 64, warps: [2, 4] }))).toThrow(/storage order/);
  });
});
