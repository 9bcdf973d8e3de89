import { ArgumentError } from '@tilekit/numeric';
import { checkTiledTensorMap } from '@tilekit/runtime';
import { describe, expect, it } from 'vitest';
import { GEMM_CATALOG, findGemmInstance } from './gemmCatalog.ts';
import { NoGemmInstanceError, selectGemmInstance } from './gemmDispatch.ts';
import { prepareGemmLaunch, type GemmBuffers } from './gemmLauncher.ts';
import { checkGemmProblem, formatGemmProblem, type GemmProblem } from './gemmProblem.ts';

describe('gemm catalog', () => {
  it('has fp16 and bf16 × 2 tiles × 2 C store widths, unique names, every one sm_90a with 384 threads', () => {
    expect(GEMM_CATALOG).toHaveLength(8);
    expect(new Set(GEMM_CATALOG.map((i) => i.name)).size).toBe(8);
    for (const i of GEMM_CATALOG) {
      expect(i.name).toMatch(/^gemm_sm90_ws_(fp16|bf16)_tn_128x(128|256)x64_s4_v[12]$/);
      expect(i.threads).toBe(384);
      expect(i.sharedBytes).toBeLessThanOrEqual(227 * 1024);
      expect(findGemmInstance(i.name)).toBe(i);
    }
  });
});

describe('gemm problem', () => {
  it('fills defaults and names bad fields', () => {
    expect(checkGemmProblem({ dtype: 'fp16', m: 3, n: 5, k: 8 })).toEqual({ dtype: 'fp16', m: 3, n: 5, k: 8, layout: 'tn', lda: 8, ldb: 8, ldc: 5, batch: 1, batchStrideA: 24, batchStrideB: 40, batchStrideC: 15 });
    expect(checkGemmProblem({ dtype: 'bf16', m: 3, n: 5, k: 8, batch: 4, batchStrideC: 16 })).toMatchObject({ batch: 4, batchStrideA: 24, batchStrideC: 16 });
    const arg = (p: GemmProblem, name: string) => expect(() => checkGemmProblem(p)).toThrow(expect.objectContaining({ argument: name }));
    arg({ dtype: 'fp32' as never, m: 1, n: 1, k: 1 }, 'problem.dtype');
    arg({ dtype: 'fp16', m: 0, n: 1, k: 1 }, 'problem.m');
    arg({ dtype: 'fp16', m: 1, n: 1, k: 1.5 }, 'problem.k');
    arg({ dtype: 'fp16', m: 1, n: 1, k: 16, lda: 8 }, 'problem.lda');
    arg({ dtype: 'fp16', m: 1, n: 4, k: 16, ldc: 3 }, 'problem.ldc');
    arg({ dtype: 'fp16', m: 1, n: 4, k: 16, layout: 'nn' as never }, 'problem.layout');
    arg({ dtype: 'fp16', m: 1, n: 4, k: 16, batch: 0 }, 'problem.batch');
    arg({ dtype: 'fp16', m: 2, n: 4, k: 16, batch: 2, batchStrideA: 20 }, 'problem.batchStrideA');
    expect(formatGemmProblem({ dtype: 'bf16', m: 257, n: 511, k: 200, ldc: 512 })).toBe('bf16 tn 257x511x200 (ldc 512)');
  });
});

describe('gemm dispatch', () => {
  it('prefers 2-element C stores, and 128x256 tiles when they still fill 132 SMs', () => {
    const big = selectGemmInstance({ dtype: 'fp16', m: 8192, n: 8192, k: 8192 });
    expect(big.policy).toMatchObject({ tileN: 256, cVector: 2, dtype: 'fp16' });
    const small = selectGemmInstance({ dtype: 'bf16', m: 2048, n: 2048, k: 2048 });
    expect(small.policy).toMatchObject({ tileN: 128, cVector: 2, dtype: 'bf16' });
    const ragged = selectGemmInstance({ dtype: 'bf16', m: 257, n: 511, k: 200 });
    expect(ragged.policy.cVector).toBe(1);
  });

  it('says why nothing matches: TMA strides must be multiples of 16 bytes', () => {
    let error: unknown;
    try {
      selectGemmInstance({ dtype: 'fp16', m: 64, n: 64, k: 100 });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(NoGemmInstanceError);
    const e = error as NoGemmInstanceError;
    expect(e.rejections).toHaveLength(4);
    expect(e.message).toMatch(/lda · 2 = 200 bytes is not a multiple of 16 \(TMA global stride\)/);
    expect(e.message).toMatch(/4 instance\(s\) of other kinds or dtypes not listed/);
    expect(() => selectGemmInstance({ dtype: 'fp16', m: 64, n: 64, k: 64 }, { alignment: { a: 8, b: 256, c: 256 } })).toThrow(/a address aligned to 8 bytes, TMA needs 16/);
  });
});

describe('gemm launcher validation (no GPU: tensor maps are checked, not encoded)', () => {
  const encode = (o: Parameters<typeof checkTiledTensorMap>[0]): Uint8Array => {
    checkTiledTensorMap(o);
    return new Uint8Array(128);
  };
  const at = (ptr: number, bytes: number) => ({ ptr: BigInt(ptr), bytes });
  const problem: GemmProblem = { dtype: 'fp16', m: 257, n: 511, k: 200 };
  const instance = selectGemmInstance(problem);
  const ok: GemmBuffers = { a: at(0x100000, 257 * 200 * 2), b: at(0x200000, 511 * 200 * 2), c: at(0x300000, 257 * 511 * 2) };

  it('packs the tensor maps (A [K, M] box [64, 128], B [K, N] box [64, tileN], 128B swizzle, zero fill) and the sizes', () => {
    const p = prepareGemmLaunch(instance, problem, ok, encode);
    expect(p.aMap).toMatchObject({ dtype: 'float16', globalDims: [200, 257, 1], globalStrides: [400, 400], boxDims: [64, 128, 1], swizzle: '128B', oobFill: 'zero' });
    expect(p.bMap).toMatchObject({ globalDims: [200, 511, 1], globalStrides: [400, 400], boxDims: [64, instance.policy.tileN, 1] });
    expect(p.launch).toEqual({ grid: [instance.pipeline.gridSize(257, 511), 1, 1], block: [384, 1, 1], sharedBytes: instance.sharedBytes });
    expect(instance.signature.unpack(p.args.bytes)).toMatchObject({ m: 257, n: 511, k: 200, ldc: 511, c: 0x300000n, batch_stride_c: 257n * 511n });
  });

  it('batched: rank-3 maps with the batch strides, grid.y = batch, C batch stride passed', () => {
    const bp: GemmProblem = { dtype: 'bf16', m: 64, n: 64, k: 64, batch: 3, batchStrideA: 64 * 64 + 8, batchStrideC: 64 * 66 };
    const inst = selectGemmInstance(bp);
    const buf = (ptr: number) => at(ptr, 1 << 20);
    const p = prepareGemmLaunch(inst, bp, { a: buf(0x100000), b: buf(0x200000), c: buf(0x300000) }, encode);
    expect(p.aMap).toMatchObject({ globalDims: [64, 64, 3], globalStrides: [128, (64 * 64 + 8) * 2], boxDims: [64, 128, 1] });
    expect(p.bMap).toMatchObject({ globalDims: [64, 64, 3], globalStrides: [128, 64 * 64 * 2] });
    expect(p.launch.grid).toEqual([1, 3, 1]);
    expect(inst.signature.unpack(p.args.bytes)).toMatchObject({ batch_stride_c: BigInt(64 * 66) });
    expect(() => selectGemmInstance({ ...bp, batchStrideA: 64 * 64 + 4 })).toThrow(/batchStrideA · 2 = 8200 bytes is not a multiple of 16/);
  });

  it('typed errors before any launch: small buffers, misalignment, overlap, unsupported strides', () => {
    const arg = (f: () => unknown, name: string, rule?: RegExp) =>
      expect(f).toThrow(expect.objectContaining({ argument: name, ...(rule ? { message: expect.stringMatching(rule) } : {}) }));
    arg(() => prepareGemmLaunch(instance, problem, { ...ok, a: at(0x100000, 1000) }, encode), 'a', /at least 102800 bytes/);
    arg(() => prepareGemmLaunch(instance, problem, { ...ok, b: at(0x200008, 511 * 200 * 2) }, encode), 'problem', /b address aligned to 8 bytes/);
    arg(() => prepareGemmLaunch(instance, problem, { ...ok, c: at(0x100000, 257 * 511 * 2) }, encode), 'c', /overlap a/);
    arg(() => prepareGemmLaunch(instance, { ...problem, lda: 204 }, { ...ok, a: at(0x100000, 257 * 204 * 2) }, encode), 'problem', /lda · 2 = 408 bytes/);
    arg(() => prepareGemmLaunch(instance, { ...problem, dtype: 'bf16' }, ok, encode), 'problem', /dtype bf16/);
    expect(() => prepareGemmLaunch(instance, { ...problem, m: -1 }, ok, encode)).toThrow(ArgumentError);
  });
});
