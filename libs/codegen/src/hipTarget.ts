// The HIP target: gfx942 (MI300), self-contained (no HIP headers).
import { ArgumentError, getDType } from '@tilekit/numeric';
import type { DTypeName } from '@tilekit/numeric';
import { CodegenTypeError } from './errors.ts';
import { bool, int32, isArithmetic, typeToString, uint8, uint16, uint32, uint64, voidType } from './cType.ts';
import type { CType, IntType } from './cType.ts';
import { makeCall, makeCast } from './expr.ts';
import type { Expr } from './expr.ts';
import { lit, ne, toExpr } from './ops.ts';
import type { ExprLike } from './ops.ts';
import { cudaUnrollPragma } from './render.ts';
import { snippet } from './requirement.ts';
import type { Requirement } from './requirement.ts';
import { exprStmt } from './stmt.ts';
import type { Stmt, Unroll } from './stmt.ts';
import { BaseTarget, checkDim, rangeFor, shuffleValue, stdHeader } from './baseTarget.ts';
import type { IndexVariable } from './baseTarget.ts';
import type { Dim, Inlining, ShuffleOptions, Target, TargetFeature } from './target.ts';

const always = '__attribute__((always_inline))';

const hipPrelude = snippet('tk_hip_prelude', [
  '// Self-contained HIP: compiled with clang -x hip -nogpuinc (no HIP headers), so the CUDA-style',
  '// keywords come from clang attributes here (HIP headers define the same macros; hence #ifndef).',
  '#ifndef __global__',
  '#define __global__ __attribute__((global))',
  '#endif',
  '#ifndef __device__',
  '#define __device__ __attribute__((device))',
  '#endif',
  '#ifndef __host__',
  '#define __host__ __attribute__((host))',
  '#endif',
  '#ifndef __shared__',
  '#define __shared__ __attribute__((shared))',
  '#endif',
]);

const hipLaneId = snippet(
  'tk_lane_id',
  [
    '// The lane of this thread in its wavefront: the number of lower lanes (mbcnt over all 64).',
    `__device__ inline ${always} unsigned int tk_lane_id() {`,
    '  return __builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u));',
    '}',
  ],
  [hipPrelude],
);

const hipSync = snippet(
  'tk_syncthreads',
  [
    '// __syncthreads(): workgroup barrier with release/acquire fences around it (as HIP does).',
    `__device__ inline ${always} void tk_syncthreads() {`,
    '  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");',
    '  __builtin_amdgcn_s_barrier();',
    '  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");',
    '}',
  ],
  [hipPrelude],
);

const hipGridDim = snippet(
  'tk_grid_dim',
  [
    '// gridDim: the grid size in work-items over the workgroup size (the dispatch packet has both).',
    ...(['x', 'y', 'z'] as const).flatMap((d) => [
      `__device__ inline ${always} unsigned int tk_grid_dim_${d}() {`,
      `  const unsigned int wg = __builtin_amdgcn_workgroup_size_${d}();`,
      `  return (__builtin_amdgcn_grid_size_${d}() + wg - 1u) / wg;`,
      '}',
    ]),
  ],
  [hipPrelude],
);

const hipShuffles = snippet(
  'tk_shfl',
  [
    '// Wavefront shuffles with CUDA __shfl*_sync semantics (width-lane segments; lanes outside the',
    '// segment read their own value), built on ds_bpermute (32 bits at a time).',
    'template <typename T>',
    `__device__ inline ${always} T tk_bpermute(T v, int src_lane) {`,
    '  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "tk_bpermute: 32- or 64-bit values only");',
    '  if constexpr (sizeof(T) == 4) {',
    '    return __builtin_bit_cast(T, __builtin_amdgcn_ds_bpermute(src_lane << 2, __builtin_bit_cast(int, v)));',
    '  } else {',
    '    struct halves { int lo; int hi; };',
    '    halves h = __builtin_bit_cast(halves, v);',
    '    h.lo = __builtin_amdgcn_ds_bpermute(src_lane << 2, h.lo);',
    '    h.hi = __builtin_amdgcn_ds_bpermute(src_lane << 2, h.hi);',
    '    return __builtin_bit_cast(T, h);',
    '  }',
    '}',
    'template <typename T>',
    `__device__ inline ${always} T tk_shfl(T v, int src_lane, int width) {`,
    '  const int self = static_cast<int>(tk_lane_id());',
    '  return tk_bpermute(v, (src_lane & (width - 1)) + (self & ~(width - 1)));',
    '}',
    'template <typename T>',
    `__device__ inline ${always} T tk_shfl_xor(T v, int lane_mask, int width) {`,
    '  const int self = static_cast<int>(tk_lane_id());',
    '  int src = self ^ lane_mask;',
    '  if (src >= ((self + width) & ~(width - 1))) src = self;',
    '  return tk_bpermute(v, src);',
    '}',
    'template <typename T>',
    `__device__ inline ${always} T tk_shfl_down(T v, unsigned int delta, int width) {`,
    '  const int self = static_cast<int>(tk_lane_id());',
    '  int src = self + static_cast<int>(delta);',
    '  if ((self & (width - 1)) + static_cast<int>(delta) >= width) src = self;',
    '  return tk_bpermute(v, src);',
    '}',
    'template <typename T>',
    `__device__ inline ${always} T tk_shfl_up(T v, unsigned int delta, int width) {`,
    '  const int self = static_cast<int>(tk_lane_id());',
    '  int src = self - static_cast<int>(delta);',
    '  if (src < (self & ~(width - 1))) src = self;',
    '  return tk_bpermute(v, src);',
    '}',
  ],
  [hipPrelude, hipLaneId],
);

const hipVotes = snippet(
  'tk_vote',
  [
    '// Wavefront votes: a ballot of all 64 lanes; the ballot of `true` is the mask of active lanes.',
    `__device__ inline ${always} bool tk_any(bool p) { return __builtin_amdgcn_ballot_w64(p) != 0ull; }`,
    `__device__ inline ${always} bool tk_all(bool p) { return __builtin_amdgcn_ballot_w64(p) == __builtin_amdgcn_ballot_w64(true); }`,
  ],
  [hipPrelude],
);

/**
 * Self-contained HIP spellings of dtypes (no HIP headers in CI): fp16 → `_Float16` and bf16 →
 * `__bf16` (clang's built-in arithmetic types for AMDGPU), fp8 formats → `unsigned char` storage
 * (convert explicitly), integers and fp32 as in `@tilekit/numeric`.
 */
const hipSelfContained: Partial<Record<DTypeName, string>> = {
  fp16: '_Float16',
  bf16: '__bf16',
  fp8e4m3fn: 'unsigned char',
  fp8e5m2: 'unsigned char',
  fp8e4m3fnuz: 'unsigned char',
  fp8e5m2fnuz: 'unsigned char',
};

/**
 * HIP for AMD gfx942 (MI300), wave64, compiled by clang as `-x hip --offload-arch=gfx942 -nogpulib
 * -nogpuinc`: no HIP headers, so `threadIdx.x` etc. do not exist. Indices use clang builtins
 * (`__builtin_amdgcn_workitem_id_x()`, `__builtin_amdgcn_workgroup_id_x()`,
 * `__builtin_amdgcn_workgroup_size_x()`), and barrier, lane id, shuffles, votes and gridDim are small
 * `tk_*` helpers emitted once per file after a prelude that defines `__global__`/`__device__`/
 * `__shared__` as clang attributes (guarded by `#ifndef`, so real HIP headers may precede them).
 */
class HipTarget extends BaseTarget {
  readonly name = 'gfx942' as const;
  readonly language = 'hip' as const;
  readonly arch = 'gfx942';
  readonly warpSize = 64;
  readonly laneMaskType = uint64;
  readonly features: ReadonlySet<TargetFeature> = new Set<TargetFeature>([
    'threads',
    'warp-shuffle',
    'warp-vote',
    'shared-memory',
    'launch-bounds',
    'mfma',
    'buffer-load',
  ]);
  override readonly prelude: readonly Requirement[] = [hipPrelude];

  #builtin(what: IndexVariable, fn: string, dim: Dim, type: IntType): Expr {
    checkDim(dim);
    const range = rangeFor(what, dim);
    const c = makeCall(`${fn}_${dim}`, [], type, { pure: true, range });
    return type === uint32 ? c : makeCast(c, uint32);
  }
  threadIdx(dim: Dim): Expr {
    return this.#builtin('threadIdx', '__builtin_amdgcn_workitem_id', dim, uint32);
  }
  blockIdx(dim: Dim): Expr {
    return this.#builtin('blockIdx', '__builtin_amdgcn_workgroup_id', dim, uint32);
  }
  blockDim(dim: Dim): Expr {
    // The builtin returns unsigned short; cast so the type matches CUDA's unsigned int.
    checkDim(dim);
    const c = makeCall(`__builtin_amdgcn_workgroup_size_${dim}`, [], uint16, { pure: true, range: rangeFor('blockDim', dim) });
    return makeCast(c, uint32);
  }
  gridDim(dim: Dim): Expr {
    checkDim(dim);
    return makeCall(`tk_grid_dim_${dim}`, [], uint32, { pure: true, range: rangeFor('gridDim', dim), requires: [hipGridDim] });
  }
  laneId(): Expr {
    return makeCall('tk_lane_id', [], uint32, { pure: true, range: { min: 0n, max: 63n }, requires: [hipLaneId] });
  }
  syncThreads(): Stmt {
    return exprStmt(makeCall('tk_syncthreads', [], voidType, { requires: [hipSync] }));
  }
  #shuffle(fn: string, value: Expr, arg: ExprLike, options: ShuffleOptions | undefined, argType: IntType): Expr {
    shuffleValue(this.name, value);
    const width = this.checkWidth(options) ?? lit(64, int32);
    return makeCall(fn, [value, toExpr(arg, lit(0, argType)), width], value.type, { requires: [hipShuffles] });
  }
  shfl(value: Expr, srcLane: ExprLike, options?: ShuffleOptions): Expr {
    return this.#shuffle('tk_shfl', value, srcLane, options, int32);
  }
  shflXor(value: Expr, laneMask: ExprLike, options?: ShuffleOptions): Expr {
    return this.#shuffle('tk_shfl_xor', value, laneMask, options, int32);
  }
  shflDown(value: Expr, delta: ExprLike, options?: ShuffleOptions): Expr {
    return this.#shuffle('tk_shfl_down', value, delta, options, uint32);
  }
  shflUp(value: Expr, delta: ExprLike, options?: ShuffleOptions): Expr {
    return this.#shuffle('tk_shfl_up', value, delta, options, uint32);
  }
  #pred(pred: ExprLike): Expr {
    const p = toExpr(pred);
    if (!isArithmetic(p.type)) throw new CodegenTypeError('vote predicate', 'must be arithmetic', typeToString(p.type));
    return p.type.kind === 'bool' ? p : ne(p, 0);
  }
  ballot(pred: ExprLike): Expr {
    return makeCall('__builtin_amdgcn_ballot_w64', [this.#pred(pred)], uint64, { requires: [hipPrelude] });
  }
  any(pred: ExprLike): Expr {
    return makeCall('tk_any', [this.#pred(pred)], bool, { requires: [hipVotes] });
  }
  all(pred: ExprLike): Expr {
    return makeCall('tk_all', [this.#pred(pred)], bool, { requires: [hipVotes] });
  }
  kernelQualifiers(options: { readonly externC?: boolean } = {}): string[] {
    return [...((options.externC ?? true) ? ['extern "C"'] : []), '__global__'];
  }
  functionQualifiers(inlining: Inlining = 'force'): string[] {
    if (inlining === 'force') return ['__device__', 'inline', always];
    if (inlining === 'never') return ['__device__', '__attribute__((noinline))'];
    return ['__device__'];
  }
  launchBounds(maxThreads: number, minBlocksPerSm?: number): string {
    if (!Number.isInteger(maxThreads) || maxThreads < 1 || maxThreads > 1024) {
      throw new ArgumentError('maxThreads', 'must be an integer in [1, 1024]', maxThreads);
    }
    if (minBlocksPerSm !== undefined) {
      return this.missing(
        '__launch_bounds__ minimum blocks per multiprocessor',
        'AMD occupancy is amdgpu_waves_per_eu; pass it as a function attribute',
      );
    }
    return `__attribute__((amdgpu_flat_work_group_size(1, ${maxThreads})))`;
  }
  cppTypeOf(dtype: DTypeName): string {
    const d = getDType(dtype);
    return hipSelfContained[d.name] ?? d.cppType.hip;
  }
  dtypeRequirements(dtype: DTypeName): Requirement[] {
    const d = getDType(dtype);
    return hipSelfContained[d.name] !== undefined ? [] : d.cppHeaders.hip.map(stdHeader);
  }
  override dtypeType(dtype: DTypeName): CType {
    const d = getDType(dtype);
    if (d.name.startsWith('fp8')) return uint8;
    return super.dtypeType(d.name);
  }
  unrollPragma(unroll: Exclude<Unroll, null>): string {
    return cudaUnrollPragma(unroll);
  }
}

/**
 * HIP for MI300 (`gfx942`), wave64, self-contained: CI compiles it with `clang -x hip
 * --offload-arch=gfx942 -nogpulib -nogpuinc --cuda-device-only`, i.e. WITHOUT HIP headers, where
 * `threadIdx`, `__syncthreads`, `__shfl*` and even `__global__` do not exist. So: indices are clang
 * builtins (`__builtin_amdgcn_workitem_id_x()`, `__builtin_amdgcn_workgroup_id_x()`,
 * `__builtin_amdgcn_workgroup_size_x()`); a prelude defines `__global__`/`__device__`/`__host__`/
 * `__shared__` as clang attributes (`#ifndef`-guarded, so real HIP headers may come first); barrier,
 * lane id, gridDim, shuffles (CUDA `__shfl*_sync` semantics on `ds_bpermute`) and votes are `tk_*`
 * helpers emitted once per file when used. dtypes use clang's own types: fp16 `_Float16`, bf16
 * `__bf16`, fp8 `unsigned char` storage. Launch bounds are `amdgpu_flat_work_group_size(1, n)`.
 */
export const gfx942: Target = new HipTarget();
