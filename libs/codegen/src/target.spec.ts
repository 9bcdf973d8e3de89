import { describe, expect, it } from 'vitest';
import { ArgumentError } from '@tilekit/numeric';
import { TargetFeatureError } from './errors.ts';
import { BlockBuilder } from './blockBuilder.ts';
import { float32, float64, int32, int8, opaque, uint32, uint64, uint8 } from './cType.ts';
import { evaluate } from './evaluate.ts';
import { div, variable } from './ops.ts';
import { printExpr } from './printExpr.ts';
import { renderStmts } from './render.ts';
import { sm80, sm90a } from './cudaTarget.ts';
import { gfx942 } from './hipTarget.ts';
import { host } from './hostTarget.ts';
import { getTarget, targets } from './targets.ts';

const x = variable('x', float32);

describe('targets', () => {
  it('describe compiler, language and machine', () => {
    expect(Object.keys(targets)).toEqual(['host', 'sm_80', 'sm_90a', 'gfx942']);
    expect([host, sm80, sm90a, gfx942].map((t) => [t.language, t.arch, t.warpSize])).toEqual([
      ['c++', null, null],
      ['cuda', 'sm_80', 32],
      ['cuda', 'sm_90a', 32],
      ['hip', 'gfx942', 64],
    ]);
    expect(sm90a.indexType).toBe(int32);
    expect(gfx942.laneMaskType).toBe(uint64);
    expect(sm90a.has('wgmma')).toBe(true);
    expect(sm80.has('wgmma')).toBe(false);
    expect(getTarget('gfx942')).toBe(gfx942);
    expect(() => getTarget('sm_75')).toThrow(ArgumentError);
  });

  it('spell thread indices as codegen expressions with hardware ranges', () => {
    expect(printExpr(sm90a.threadIdx('x'))).toBe('threadIdx.x');
    expect(printExpr(sm90a.gridDim('z'))).toBe('gridDim.z');
    expect(printExpr(gfx942.threadIdx('y'))).toBe('__builtin_amdgcn_workitem_id_y()');
    expect(printExpr(gfx942.blockIdx('x'))).toBe('__builtin_amdgcn_workgroup_id_x()');
    expect(printExpr(gfx942.blockDim('x'))).toBe('static_cast<unsigned int>(__builtin_amdgcn_workgroup_size_x())');
    expect(printExpr(gfx942.gridDim('x'))).toBe('tk_grid_dim_x()');
    // Known non-negative and < 1024: a division by 32 becomes a shift, and threadIdx.x / 1024 folds.
    expect(printExpr(div(sm90a.threadIdx('x'), 32))).toBe('threadIdx.x >> 5');
    expect(printExpr(div(gfx942.threadIdx('x'), 1024))).toBe('0u');
    expect(evaluate(div(sm90a.threadIdx('x'), 32), { 'threadIdx.x': 100 })).toBe(3);
    expect(printExpr(sm90a.laneId())).toBe('tk_lane_id()');
    expect(printExpr(gfx942.warpSizeExpr())).toBe('64');
  });

  it('spell barriers, shuffles and votes', () => {
    expect(renderStmts([sm90a.syncThreads(), gfx942.syncThreads()])).toBe('__syncthreads();\ntk_syncthreads();\n');
    expect(printExpr(sm90a.shfl(x, 3))).toBe('__shfl_sync(0xffffffffu, x, 3)');
    expect(printExpr(sm90a.shflXor(x, 1, { width: 16 }))).toBe('__shfl_xor_sync(0xffffffffu, x, 1, 16)');
    expect(printExpr(sm80.shflDown(x, 2, { mask: 0xffff }))).toBe('__shfl_down_sync(65535u, x, 2u)');
    expect(printExpr(sm90a.shflUp(x, 1))).toBe('__shfl_up_sync(0xffffffffu, x, 1u)');
    expect(printExpr(gfx942.shflXor(x, 1))).toBe('tk_shfl_xor(x, 1, 64)');
    expect(printExpr(gfx942.shflDown(x, 4, { width: 32 }))).toBe('tk_shfl_down(x, 4u, 32)');
    expect(printExpr(sm90a.ballot(variable('p', int32)))).toBe('__ballot_sync(0xffffffffu, p)');
    expect(printExpr(gfx942.ballot(variable('p', int32)))).toBe('__builtin_amdgcn_ballot_w64(p != 0)');
    expect(printExpr(sm90a.any(variable('p', int32)))).toBe('__any_sync(0xffffffffu, p) != 0');
    expect(printExpr(gfx942.all(variable('p', int32)))).toBe('tk_all(p != 0)');
    expect(sm90a.shfl(x, 0).type).toBe(float32);
    expect(sm90a.ballot(1).type).toBe(uint32);
    expect(() => sm90a.shfl(variable('c', int8), 0)).toThrow(/32\/64-bit/);
    expect(() => sm90a.shflXor(x, 1, { width: 48 })).toThrow(ArgumentError);
  });

  it('spell qualifiers, launch bounds and shared memory', () => {
    expect(sm90a.kernelQualifiers()).toEqual(['extern "C"', '__global__']);
    expect(sm90a.kernelQualifiers({ externC: false })).toEqual(['__global__']);
    expect(sm90a.functionQualifiers()).toEqual(['__device__', '__forceinline__']);
    expect(gfx942.functionQualifiers()).toEqual(['__device__', 'inline', '__attribute__((always_inline))']);
    expect(host.functionQualifiers('force')).toEqual(['inline', '__attribute__((always_inline))']);
    expect(sm90a.launchBounds(256, 2)).toBe('__launch_bounds__(256, 2)');
    expect(gfx942.launchBounds(256)).toBe('__attribute__((amdgpu_flat_work_group_size(1, 256)))');
    expect(sm90a.restrict).toBe('__restrict__');
    const b = new BlockBuilder();
    const s = sm90a.declareShared(b, 'tile', float64, 128, { align: 16 });
    expect(renderStmts(b.statements)).toBe('alignas(16) __shared__ double tile[128];\n');
    expect(printExpr(s)).toBe('tile');
  });

  it('name dtypes with their headers (self-contained on gfx942)', () => {
    expect(sm90a.cppTypeOf('fp16')).toBe('__half');
    expect(sm90a.cppTypeOf('bf16')).toBe('__nv_bfloat16');
    expect(sm90a.cppTypeOf('fp8e4m3fn')).toBe('__nv_fp8_e4m3');
    expect(sm90a.dtypeRequirements('fp16')).toEqual([{ kind: 'include', header: '<cuda_fp16.h>' }]);
    expect(sm90a.dtypeRequirements('fp8e5m2')).toEqual([{ kind: 'include', header: '<cuda_fp8.h>' }]);
    expect(sm90a.dtypeType('bf16')).toEqual(opaque('__nv_bfloat16', [{ kind: 'include', header: '<cuda_bf16.h>' }]));
    expect(sm90a.dtypeType('fp32')).toBe(float32);
    expect(sm90a.dtypeType('uint8')).toBe(uint8);
    expect(host.cppTypeOf('fp16')).toBe('uint16_t');
    expect(gfx942.cppTypeOf('fp16')).toBe('_Float16');
    expect(gfx942.cppTypeOf('bf16')).toBe('__bf16');
    expect(gfx942.cppTypeOf('fp8e4m3fnuz')).toBe('unsigned char');
    expect(gfx942.dtypeRequirements('fp16')).toEqual([]);
    expect(gfx942.dtypeType('fp8e5m2fnuz')).toBe(uint8);
    expect(() => sm90a.cppTypeOf('fp64' as never)).toThrow(ArgumentError);
  });

  it('refuse what a target lacks with a typed error naming target and feature', () => {
    const attempts: (() => unknown)[] = [
      () => host.threadIdx('x'),
      () => host.shflXor(x, 1),
      () => host.ballot(true),
      () => host.syncThreads(),
      () => host.kernelQualifiers(),
      () => host.launchBounds(128),
      () => host.declareShared(new BlockBuilder(), 's', float32, 4),
      () => host.warpSizeExpr(),
      () => gfx942.launchBounds(256, 2),
      () => sm80.require('wgmma'),
    ];
    for (const attempt of attempts) {
      expect(attempt).toThrow(TargetFeatureError);
    }
    try {
      host.shflXor(x, 1);
    } catch (e) {
      const err = e as TargetFeatureError;
      expect(err.code).toBe('codegen/unsupported-feature');
      expect(err.target).toBe('host');
      expect(err.message).toMatch(/^target host: warp shuffle \(__shfl_xor_sync\) is not available/);
    }
  });
});
