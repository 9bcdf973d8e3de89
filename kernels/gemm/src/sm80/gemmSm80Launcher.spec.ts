import { describe, expect, it } from 'vitest';
import type { GemmBuffers } from '../gemmLauncher.ts';
import type { GemmProblem } from '../gemmProblem.ts';
import { gemmSm80CatalogFor, GEMM_SM80_CATALOG } from './gemmSm80Catalog.ts';
import { GemmSm80Instance } from './gemmSm80Instance.ts';
import { prepareGemmSm80Launch } from './gemmSm80Launcher.ts';
import { sm90a } from '@tilekit/codegen';

describe('sm_80 gemm launcher validation (no GPU: plain pointers, no tensor maps)', () => {
  const at = (ptr: number, bytes: number) => ({ ptr: BigInt(ptr), bytes });
  const problem: GemmProblem = { dtype: 'fp16', m: 257, n: 129, k: 77, lda: 80, ldb: 80 };
  const instance = GEMM_SM80_CATALOG[0]!;
  const ok: GemmBuffers = { a: at(0x100000, 257 * 80 * 2), b: at(0x200000, 129 * 80 * 2), c: at(0x300000, 257 * 129 * 2) };

  it('packs the pointers, sizes, leading dimensions and batch strides; grid [tiles, batch, 1], the pipeline block and shared memory', () => {
    const p = prepareGemmSm80Launch(instance, problem, ok);
    expect(p.launch).toEqual({ grid: [instance.pipeline.gridSize(257, 129), 1, 1], block: [256, 1, 1], sharedBytes: instance.sharedBytes });
    expect(instance.signature.unpack(p.args.bytes)).toMatchObject({
      a: 0x100000n,
      b: 0x200000n,
      c: 0x300000n,
      m: 257,
      n: 129,
      k: 77,
      lda: 80,
      ldb: 80,
      ldc: 129,
      batch_stride_c: 257n * 129n,
    });
    // The sm_90a build of the same policy packs the same arguments.
    const hopper = gemmSm80CatalogFor(sm90a)[0]!;
    expect(hopper.signature.unpack(prepareGemmSm80Launch(hopper, problem, ok).args.bytes)).toEqual(instance.signature.unpack(p.args.bytes));
  });

  it('batched nn: the batch strides reach the kernel, grid.y = batch', () => {
    const nn = GEMM_SM80_CATALOG.find((i) => i.dtype === 'bf16' && i.policy.layout === 'nn')!;
    const bp: GemmProblem = { dtype: 'bf16', layout: 'nn', m: 200, n: 136, k: 96, lda: 200, batch: 3, batchStrideA: 96 * 200 + 64 };
    const buf = (ptr: number) => at(ptr, 1 << 20);
    const p = prepareGemmSm80Launch(nn, bp, { a: buf(0x100000), b: buf(0x200000), c: buf(0x300000) });
    expect(p.launch.grid).toEqual([nn.pipeline.gridSize(200, 136), 3, 1]);
    expect(nn.signature.unpack(p.args.bytes)).toMatchObject({
      lda: 200,
      batch_stride_a: BigInt(96 * 200 + 64),
      batch_stride_b: BigInt(136 * 96),
    });
  });

  it('typed errors before any launch: small buffers, 16-byte cp.async alignment, overlap, strides, epilogue', () => {
    const arg = (f: () => unknown, name: string, rule: RegExp) =>
      expect(f).toThrow(expect.objectContaining({ argument: name, message: expect.stringMatching(rule) }));
    // 256 rows of lda 80 and a last row of K = 77 read as 80 (the final 16-byte cp.async): 41120 bytes.
    arg(() => prepareGemmSm80Launch(instance, problem, { ...ok, a: at(0x100000, 1000) }), 'a', /at least 41120 bytes/);
    arg(() => prepareGemmSm80Launch(instance, problem, { ...ok, a: at(0x100000, 41114) }), 'a', /at least 41120 bytes/);
    expect(() =>
      prepareGemmSm80Launch(instance, problem, { ...ok, a: at(0x100000, 41120), b: at(0x200000, 128 * 80 * 2 + 80 * 2) }),
    ).not.toThrow();
    arg(
      () => prepareGemmSm80Launch(instance, problem, { ...ok, a: at(0x100008, 257 * 80 * 2) }),
      'problem',
      /a address aligned to 8 bytes, cp.async needs 16/,
    );
    arg(() => prepareGemmSm80Launch(instance, problem, { ...ok, c: at(0x200010, 257 * 129 * 2) }), 'c', /overlap b/);
    arg(() => prepareGemmSm80Launch(instance, { ...problem, lda: 77 }, ok), 'problem', /lda = 77 is not a multiple of 8/);
    arg(
      () => prepareGemmSm80Launch(instance, { ...problem, layout: 'nn', lda: 264 }, { ...ok, a: at(0x100000, 1 << 20) }),
      'problem',
      /layout nn: this kernel reads tn/,
    );
    arg(() => prepareGemmSm80Launch(instance, { ...problem, activation: 'relu' }, ok), 'activation', /must be none/);
    arg(() => prepareGemmSm80Launch(instance, problem, { ...ok, bias: at(0x400000, 1 << 12) }), 'bias', /adds no bias/);
    arg(() => prepareGemmSm80Launch(instance, { ...problem, m: 0 }, ok), 'problem.m', /./);
  });

  it('epilogue instances take alpha and the bias address', () => {
    const inst = new GemmSm80Instance({ ...instance.policy, epilogue: { bias: true, activation: 'relu' } });
    const ep: GemmProblem = { ...problem, alpha: 0.5, bias: true, activation: 'relu' };
    const p = prepareGemmSm80Launch(inst, ep, { ...ok, bias: at(0x400000, 129 * 2) });
    expect(inst.signature.unpack(p.args.bytes)).toMatchObject({ alpha: 0.5, bias: 0x400000n });
    expect(() => prepareGemmSm80Launch(inst, ep, ok)).toThrow(expect.objectContaining({ argument: 'bias' }));
  });
});
