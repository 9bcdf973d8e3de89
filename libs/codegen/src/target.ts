import { ArgumentError, getDType } from '@tilekit/numeric';
import type { DTypeName } from '@tilekit/numeric';
import { CodegenTypeError, TargetFeatureError } from './errors.ts';
import {
  array,
  bool,
  float32,
  int8,
  int32,
  int64,
  isArithmetic,
  opaque,
  typeToString,
  uint8,
  uint16,
  uint32,
  uint64,
  voidType,
} from './cType.ts';
import type { CType, IntType } from './cType.ts';
import { makeCall, makeCast, makeMember, makeVar } from './expr.ts';
import type { Expr, IntRange, VarExpr } from './expr.ts';
import { lit, ne, toExpr } from './ops.ts';
import type { ExprLike } from './ops.ts';
import { cudaUnrollPragma } from './render.ts';
import { include, snippet } from './requirement.ts';
import type { Requirement } from './requirement.ts';
import type { SourceDialect } from './sourceFile.ts';
import { exprStmt } from './stmt.ts';
import type { Stmt, Unroll } from './stmt.ts';
import type { BlockBuilder } from './blockBuilder.ts';

/** The targets tilekit emits code for. */
export type TargetName = 'host' | 'sm_80' | 'sm_90a' | 'gfx942';
/** The source language of a target. */
export type Language = 'c++' | 'cuda' | 'hip';
/** A grid/block dimension. */
export type Dim = 'x' | 'y' | 'z';

/** Capabilities a target may have; asking for a missing one throws `TargetFeatureError`. */
export type TargetFeature =
  | 'threads'
  | 'warp-shuffle'
  | 'warp-vote'
  | 'shared-memory'
  | 'launch-bounds'
  | 'cp-async'
  | 'ldmatrix'
  | 'mma-sync'
  | 'mbarrier'
  | 'mbarrier-tx'
  | 'elect-sync'
  | 'griddepcontrol'
  | 'wgmma'
  | 'tma'
  | 'clusters'
  | 'setmaxnreg'
  | 'mfma'
  | 'buffer-load';

/** How strongly a device helper function is inlined. */
export type Inlining = 'force' | 'default' | 'never';

/** Options of the warp shuffles. */
export interface ShuffleOptions {
  /** Segment width (a power of two ≤ the warp size; default the warp size). */
  readonly width?: ExprLike;
  /** CUDA participation mask (default all lanes, `0xffffffffu`); ignored where the dialect has none (HIP). */
  readonly mask?: ExprLike;
}

/** Options of a shared-memory array. */
export interface SharedOptions {
  /** Byte alignment (`alignas(n)`), a power of two. */
  readonly align?: number;
}

/**
 * A compilation target and its dialect: which compiler flags select it, the spellings of thread
 * indices, barriers, shuffles and votes, function qualifiers, and the C++ names of dtypes. Every
 * spelling comes back as a codegen expression or statement, so kernels are written once:
 *
 * ```ts
 * const tid = t.threadIdx('x');                 // threadIdx.x | __builtin_amdgcn_workitem_id_x()
 * b.expr(...); b.push(t.syncThreads());         // __syncthreads() | tk_syncthreads()
 * const v = t.shflXor(x, 1);                    // __shfl_xor_sync(0xffffffffu, x, 1) | tk_shfl_xor(x, 1, 64)
 * ```
 *
 * A target is also a `SourceDialect`: a `SourceBuilder` with `dialect: target` emits its prelude
 * and its unroll pragmas.
 */
export interface Target extends SourceDialect {
  readonly name: TargetName;
  readonly language: Language;
  /** The architecture string for the compiler (`sm_90a` for nvcc `-arch`, `gfx942` for `--offload-arch`); `null` on host. */
  readonly arch: string | null;
  /** Threads per warp / wavefront (32 on NVIDIA, 64 on gfx942); `null` on host (no warps). */
  readonly warpSize: number | null;
  /** The default type of emitted index arithmetic (CK-tile's `index_t`: `int`). */
  readonly indexType: IntType;
  /** The type of a ballot's lane mask (`unsigned int` for 32 lanes, `unsigned long long` for 64). */
  readonly laneMaskType: IntType;
  /** What the target can do. */
  readonly features: ReadonlySet<TargetFeature>;
  /** Requirements every source file for this target starts with. */
  readonly prelude: readonly Requirement[];
  has(feature: TargetFeature): boolean;
  /** Throw `TargetFeatureError` unless the target has `feature`. */
  require(feature: TargetFeature): void;

  /** The thread index in its block along `dim` (`unsigned int`, range [0, 1023] / [0, 63] for z). */
  threadIdx(dim: Dim): Expr;
  /** The block index in the grid along `dim`. */
  blockIdx(dim: Dim): Expr;
  /** Threads per block along `dim` (≥ 1). */
  blockDim(dim: Dim): Expr;
  /** Blocks per grid along `dim` (≥ 1). */
  gridDim(dim: Dim): Expr;
  /** This thread's lane in its warp (`unsigned int` in [0, warpSize)). */
  laneId(): Expr;
  /** The warp size as an `int` literal (a compile-time constant, unlike CUDA's `warpSize` variable). */
  warpSizeExpr(): Expr;
  /** Block-wide barrier with shared-memory visibility (`__syncthreads()`). */
  syncThreads(): Stmt;
  /** Read `value` from lane `srcLane` of this thread's segment. */
  shfl(value: Expr, srcLane: ExprLike, options?: ShuffleOptions): Expr;
  /** Read `value` from lane `self ^ laneMask` (own value if outside the segment). */
  shflXor(value: Expr, laneMask: ExprLike, options?: ShuffleOptions): Expr;
  /** Read `value` from lane `self + delta` (own value past the segment end). */
  shflDown(value: Expr, delta: ExprLike, options?: ShuffleOptions): Expr;
  /** Read `value` from lane `self - delta` (own value before the segment start). */
  shflUp(value: Expr, delta: ExprLike, options?: ShuffleOptions): Expr;
  /** Bit i set iff `pred` holds on lane i (`laneMaskType`). */
  ballot(pred: ExprLike, options?: Pick<ShuffleOptions, 'mask'>): Expr;
  /** `pred` holds on some active lane (`bool`). */
  any(pred: ExprLike, options?: Pick<ShuffleOptions, 'mask'>): Expr;
  /** `pred` holds on every active lane (`bool`). */
  all(pred: ExprLike, options?: Pick<ShuffleOptions, 'mask'>): Expr;

  /** Qualifiers of a kernel entry point: `extern "C" __global__` (unmangled: NVRTC/hipRTC need no name expressions). */
  kernelQualifiers(options?: { readonly externC?: boolean }): string[];
  /** Qualifiers of a helper function (`__device__ __forceinline__`; on host `inline`). */
  functionQualifiers(inlining?: Inlining): string[];
  /** A launch-bounds attribute (`__launch_bounds__(256)`; HIP: `amdgpu_flat_work_group_size`). */
  launchBounds(maxThreads: number, minBlocksPerSm?: number): string;
  /** The restrict qualifier spelling (`__restrict__` everywhere). */
  readonly restrict: string;
  /** Declare `[alignas(n)] __shared__ T name[length];` in `b`; returns the array. */
  declareShared(b: BlockBuilder, name: string, element: CType, length: number, options?: SharedOptions): VarExpr;

  /** The C++ spelling of a dtype on this target (from `@tilekit/numeric`, except self-contained HIP: see `gfx942`). */
  cppTypeOf(dtype: DTypeName): string;
  /** The headers that declare `cppTypeOf(dtype)`. */
  dtypeRequirements(dtype: DTypeName): Requirement[];
  /**
   * The codegen type of a dtype's elements: fp32 → `float32`, int32/int64 → `int32`/`int64`,
   * int8/uint8 → `int8`/`uint8` (the same types as `int8_t`/`uint8_t`), others an opaque type named
   * `cppTypeOf(dtype)` carrying its headers.
   */
  dtypeType(dtype: DTypeName): CType;
  /** Spell a loop unroll hint (see `Unroll`); `null` prints nothing. */
  unrollPragma(unroll: Exclude<Unroll, null>): string | null;
}

const dims: readonly Dim[] = ['x', 'y', 'z'];
const fullMask = (): Expr => lit(0xffffffff, uint32);

function checkDim(dim: Dim): void {
  if (!dims.includes(dim)) throw new ArgumentError('dim', 'must be "x", "y" or "z"', dim);
}

/** Hardware limits as ranges: threadIdx x/y < 1024, z < 64; blockIdx x < 2^31 - 1, y/z < 65535. */
const limits = {
  threadIdx: { x: [0n, 1023n], y: [0n, 1023n], z: [0n, 63n] },
  blockDim: { x: [1n, 1024n], y: [1n, 1024n], z: [1n, 64n] },
  blockIdx: { x: [0n, 2147483646n], y: [0n, 65534n], z: [0n, 65534n] },
  gridDim: { x: [1n, 2147483647n], y: [1n, 65535n], z: [1n, 65535n] },
} as const;

function rangeFor(what: keyof typeof limits, dim: Dim): IntRange {
  const [min, max] = limits[what][dim];
  return { min, max };
}

function shuffleValue(target: string, value: Expr): void {
  const t = value.type;
  const ok = t.kind === 'opaque' || (t.kind === 'int' && t.bits >= 32) || t.kind === 'float';
  if (!ok)
    throw new CodegenTypeError(
      `shuffle on ${target}`,
      'value must be a 32/64-bit integer, float, double or an opaque type',
      typeToString(t),
    );
}

function dtypeScalar(dtype: DTypeName): CType | null {
  switch (dtype) {
    case 'fp32':
      return float32;
    case 'int32':
      return int32;
    case 'int64':
      return int64;
    case 'int8':
      return int8;
    case 'uint8':
      return uint8;
    default:
      return null;
  }
}

/** numeric lists bare header names (`cuda_fp16.h`, `cstdint`): all are system headers. */
const stdHeader = (h: string): Requirement => include(`<${h}>`);

/** Shared behaviour; subclasses fill in the dialect. */
abstract class BaseTarget implements Target {
  abstract readonly name: TargetName;
  abstract readonly language: Language;
  abstract readonly arch: string | null;
  abstract readonly warpSize: number | null;
  abstract readonly laneMaskType: IntType;
  abstract readonly features: ReadonlySet<TargetFeature>;
  readonly indexType: IntType = int32;
  readonly prelude: readonly Requirement[] = [];
  readonly restrict = '__restrict__';
  readonly indent = 2;

  has(feature: TargetFeature): boolean {
    return this.features.has(feature);
  }

  require(feature: TargetFeature): void {
    if (!this.has(feature)) throw new TargetFeatureError(this.name, feature);
  }

  protected missing(feature: string, hint?: string): never {
    throw new TargetFeatureError(this.name, feature, hint);
  }

  abstract threadIdx(dim: Dim): Expr;
  abstract blockIdx(dim: Dim): Expr;
  abstract blockDim(dim: Dim): Expr;
  abstract gridDim(dim: Dim): Expr;
  abstract laneId(): Expr;
  abstract syncThreads(): Stmt;
  abstract shfl(value: Expr, srcLane: ExprLike, options?: ShuffleOptions): Expr;
  abstract shflXor(value: Expr, laneMask: ExprLike, options?: ShuffleOptions): Expr;
  abstract shflDown(value: Expr, delta: ExprLike, options?: ShuffleOptions): Expr;
  abstract shflUp(value: Expr, delta: ExprLike, options?: ShuffleOptions): Expr;
  abstract ballot(pred: ExprLike, options?: Pick<ShuffleOptions, 'mask'>): Expr;
  abstract any(pred: ExprLike, options?: Pick<ShuffleOptions, 'mask'>): Expr;
  abstract all(pred: ExprLike, options?: Pick<ShuffleOptions, 'mask'>): Expr;
  abstract kernelQualifiers(options?: { readonly externC?: boolean }): string[];
  abstract functionQualifiers(inlining?: Inlining): string[];
  abstract launchBounds(maxThreads: number, minBlocksPerSm?: number): string;
  abstract cppTypeOf(dtype: DTypeName): string;
  abstract dtypeRequirements(dtype: DTypeName): Requirement[];
  abstract unrollPragma(unroll: Exclude<Unroll, null>): string | null;

  warpSizeExpr(): Expr {
    if (this.warpSize === null) return this.missing('warpSize');
    return lit(this.warpSize, int32);
  }

  dtypeType(dtype: DTypeName): CType {
    const d = getDType(dtype);
    const scalar = dtypeScalar(d.name);
    if (scalar !== null) return scalar;
    const cpp = this.cppTypeOf(d.name);
    return opaque(cpp, this.dtypeRequirements(d.name));
  }

  declareShared(b: BlockBuilder, name: string, element: CType, length: number, options: SharedOptions = {}): VarExpr {
    this.require('shared-memory');
    const align = options.align;
    if (align !== undefined && (!Number.isInteger(align) || align <= 0 || (align & (align - 1)) !== 0)) {
      throw new ArgumentError('align', 'must be a positive power of two', align);
    }
    // alignas must come first: clang rejects `__shared__ alignas(16)` (an attribute list after a GNU attribute).
    const qualifiers = [...(align === undefined ? [] : [`alignas(${align})`]), '__shared__'];
    return b.declare(name, array(element, length), null, { qualifiers });
  }

  protected checkWidth(options: ShuffleOptions | undefined): Expr | null {
    if (options?.width === undefined) return null;
    const w = toExpr(options.width);
    if (w.kind === 'literal') {
      const v = Number(w.value);
      if (!Number.isInteger(v) || v < 1 || v > (this.warpSize ?? 0) || (v & (v - 1)) !== 0) {
        throw new ArgumentError('width', `must be a power of two in [1, ${this.warpSize}]`, v);
      }
    }
    return w;
  }
}

/** The plain C++17 host target (g++): no threads, warps or shared memory. */
class HostTarget extends BaseTarget {
  readonly name = 'host' as const;
  readonly language = 'c++' as const;
  readonly arch = null;
  readonly warpSize = null;
  readonly laneMaskType = uint32;
  readonly features: ReadonlySet<TargetFeature> = new Set();

  threadIdx(): Expr {
    return this.missing('threadIdx', 'host code has no GPU threads');
  }
  blockIdx(): Expr {
    return this.missing('blockIdx', 'host code has no GPU blocks');
  }
  blockDim(): Expr {
    return this.missing('blockDim', 'host code has no GPU blocks');
  }
  gridDim(): Expr {
    return this.missing('gridDim', 'host code has no GPU grid');
  }
  laneId(): Expr {
    return this.missing('laneId', 'host code has no warps');
  }
  syncThreads(): Stmt {
    return this.missing('syncThreads (__syncthreads)', 'host code has no blocks');
  }
  shfl(): Expr {
    return this.missing('warp shuffle (__shfl_sync)', 'host code has no warps');
  }
  shflXor(): Expr {
    return this.missing('warp shuffle (__shfl_xor_sync)', 'host code has no warps');
  }
  shflDown(): Expr {
    return this.missing('warp shuffle (__shfl_down_sync)', 'host code has no warps');
  }
  shflUp(): Expr {
    return this.missing('warp shuffle (__shfl_up_sync)', 'host code has no warps');
  }
  ballot(): Expr {
    return this.missing('warp vote (__ballot_sync)', 'host code has no warps');
  }
  any(): Expr {
    return this.missing('warp vote (__any_sync)', 'host code has no warps');
  }
  all(): Expr {
    return this.missing('warp vote (__all_sync)', 'host code has no warps');
  }
  kernelQualifiers(): string[] {
    return this.missing('kernel entry points (__global__)', 'use functionQualifiers() for host functions');
  }
  functionQualifiers(inlining: Inlining = 'default'): string[] {
    if (inlining === 'force') return ['inline', '__attribute__((always_inline))'];
    if (inlining === 'never') return ['__attribute__((noinline))'];
    return ['inline'];
  }
  launchBounds(): string {
    return this.missing('__launch_bounds__');
  }
  cppTypeOf(dtype: DTypeName): string {
    return getDType(dtype).cppType.host;
  }
  dtypeRequirements(dtype: DTypeName): Requirement[] {
    return getDType(dtype).cppHeaders.host.map(stdHeader);
  }
  /** g++ spells hints `#pragma GCC unroll n`; a full unroll has no count to give, so nothing is printed. */
  unrollPragma(unroll: Exclude<Unroll, null>): string | null {
    if (unroll === true) return null;
    if (unroll === false) return '#pragma GCC unroll 1';
    return `#pragma GCC unroll ${unroll}`;
  }
}

const cudaLaneId = snippet('tk_lane_id', [
  '// The lane of this thread in its warp (PTX %laneid; correct for any block shape).',
  '__device__ __forceinline__ unsigned int tk_lane_id() {',
  '  unsigned int lane;',
  '  asm("mov.u32 %0, %%laneid;" : "=r"(lane));',
  '  return lane;',
  '}',
]);

/** CUDA targets (nvcc / NVRTC): `threadIdx.x`, `__syncthreads()`, `__shfl_*_sync`, `__ballot_sync`. */
class CudaTarget extends BaseTarget {
  readonly language = 'cuda' as const;
  readonly warpSize = 32;
  readonly laneMaskType = uint32;
  readonly name: 'sm_80' | 'sm_90a';
  readonly arch: string;
  readonly features: ReadonlySet<TargetFeature>;

  constructor(name: 'sm_80' | 'sm_90a', features: readonly TargetFeature[]) {
    super();
    this.name = name;
    this.arch = name;
    this.features = new Set(features);
  }

  #builtin(variable: 'threadIdx' | 'blockIdx' | 'blockDim' | 'gridDim', dim: Dim): Expr {
    checkDim(dim);
    return makeMember(
      makeVar(variable, opaque(variable === 'threadIdx' || variable === 'blockIdx' ? 'uint3' : 'dim3')),
      dim,
      uint32,
      rangeFor(variable, dim),
    );
  }
  threadIdx(dim: Dim): Expr {
    return this.#builtin('threadIdx', dim);
  }
  blockIdx(dim: Dim): Expr {
    return this.#builtin('blockIdx', dim);
  }
  blockDim(dim: Dim): Expr {
    return this.#builtin('blockDim', dim);
  }
  gridDim(dim: Dim): Expr {
    return this.#builtin('gridDim', dim);
  }
  laneId(): Expr {
    return makeCall('tk_lane_id', [], uint32, { pure: true, range: { min: 0n, max: 31n }, requires: [cudaLaneId] });
  }
  syncThreads(): Stmt {
    return exprStmt(makeCall('__syncthreads', [], voidType));
  }
  #shuffle(fn: string, value: Expr, arg: ExprLike, options: ShuffleOptions | undefined, argType: IntType): Expr {
    shuffleValue(this.name, value);
    const width = this.checkWidth(options);
    const mask = options?.mask === undefined ? fullMask() : toExpr(options.mask, fullMask());
    const args = [mask, value, toExpr(arg, lit(0, argType)), ...(width === null ? [] : [width])];
    return makeCall(fn, args, value.type);
  }
  shfl(value: Expr, srcLane: ExprLike, options?: ShuffleOptions): Expr {
    return this.#shuffle('__shfl_sync', value, srcLane, options, int32);
  }
  shflXor(value: Expr, laneMask: ExprLike, options?: ShuffleOptions): Expr {
    return this.#shuffle('__shfl_xor_sync', value, laneMask, options, int32);
  }
  shflDown(value: Expr, delta: ExprLike, options?: ShuffleOptions): Expr {
    return this.#shuffle('__shfl_down_sync', value, delta, options, uint32);
  }
  shflUp(value: Expr, delta: ExprLike, options?: ShuffleOptions): Expr {
    return this.#shuffle('__shfl_up_sync', value, delta, options, uint32);
  }
  #vote(fn: string, pred: ExprLike, options: Pick<ShuffleOptions, 'mask'> | undefined, type: IntType): Expr {
    const mask = options?.mask === undefined ? fullMask() : toExpr(options.mask, fullMask());
    const p = toExpr(pred);
    if (!isArithmetic(p.type)) throw new CodegenTypeError(`predicate of ${fn}`, 'must be arithmetic', typeToString(p.type));
    return makeCall(fn, [mask, p], type);
  }
  ballot(pred: ExprLike, options?: Pick<ShuffleOptions, 'mask'>): Expr {
    return this.#vote('__ballot_sync', pred, options, uint32);
  }
  any(pred: ExprLike, options?: Pick<ShuffleOptions, 'mask'>): Expr {
    return ne(this.#vote('__any_sync', pred, options, int32), 0);
  }
  all(pred: ExprLike, options?: Pick<ShuffleOptions, 'mask'>): Expr {
    return ne(this.#vote('__all_sync', pred, options, int32), 0);
  }
  kernelQualifiers(options: { readonly externC?: boolean } = {}): string[] {
    return [...((options.externC ?? true) ? ['extern "C"'] : []), '__global__'];
  }
  functionQualifiers(inlining: Inlining = 'force'): string[] {
    if (inlining === 'force') return ['__device__', '__forceinline__'];
    if (inlining === 'never') return ['__device__', '__noinline__'];
    return ['__device__'];
  }
  launchBounds(maxThreads: number, minBlocksPerSm?: number): string {
    if (!Number.isInteger(maxThreads) || maxThreads < 1 || maxThreads > 1024) {
      throw new ArgumentError('maxThreads', 'must be an integer in [1, 1024]', maxThreads);
    }
    if (minBlocksPerSm === undefined) return `__launch_bounds__(${maxThreads})`;
    if (!Number.isInteger(minBlocksPerSm) || minBlocksPerSm < 1)
      throw new ArgumentError('minBlocksPerSm', 'must be a positive integer', minBlocksPerSm);
    return `__launch_bounds__(${maxThreads}, ${minBlocksPerSm})`;
  }
  cppTypeOf(dtype: DTypeName): string {
    return getDType(dtype).cppType.cuda;
  }
  dtypeRequirements(dtype: DTypeName): Requirement[] {
    return getDType(dtype).cppHeaders.cuda.map(stdHeader);
  }
  unrollPragma(unroll: Exclude<Unroll, null>): string {
    return cudaUnrollPragma(unroll);
  }
}

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

  #builtin(what: keyof typeof limits, fn: string, dim: Dim, type: IntType): Expr {
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

const cudaCommon: readonly TargetFeature[] = [
  'threads',
  'warp-shuffle',
  'warp-vote',
  'shared-memory',
  'launch-bounds',
  'cp-async',
  'ldmatrix',
  'mma-sync',
  'mbarrier',
];

/** Plain C++17 for g++ (tests, host references). */
export const host: Target = new HostTarget();
/** CUDA for Ampere (A100): mma.sync, cp.async, ldmatrix. */
export const sm80: Target = new CudaTarget('sm_80', cudaCommon);
/**
 * CUDA for Hopper with arch-specific features (`sm_90a`: wgmma, TMA, clusters, setmaxnreg; and the
 * sm_90 mbarrier transaction counts, `elect.sync`, `griddepcontrol`).
 */
export const sm90a: Target = new CudaTarget('sm_90a', [
  ...cudaCommon,
  'mbarrier-tx',
  'elect-sync',
  'griddepcontrol',
  'wgmma',
  'tma',
  'clusters',
  'setmaxnreg',
]);
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

/** Every target by name. */
export const targets: Readonly<Record<TargetName, Target>> = Object.freeze({ host, sm_80: sm80, sm_90a: sm90a, gfx942 });

/** The target named `name`; throws `ArgumentError` listing the known names. */
export function getTarget(name: string): Target {
  if (!Object.hasOwn(targets, name)) throw new ArgumentError('target', `must be one of ${Object.keys(targets).join(', ')}`, name);
  return targets[name as TargetName];
}
