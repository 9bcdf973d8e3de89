// The Target interface: what every target (hostTarget.ts, cudaTarget.ts, hipTarget.ts) spells.
import type { DTypeName } from '@tilekit/numeric';
import type { CType, IntType } from './cType.ts';
import type { Expr, VarExpr } from './expr.ts';
import type { ExprLike } from './ops.ts';
import type { Requirement } from './requirement.ts';
import type { SourceDialect } from './sourceFile.ts';
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
  | 'vector-red'
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
