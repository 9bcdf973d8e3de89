// The CUDA targets (nvcc / NVRTC): sm_80 and sm_90a.
import { ArgumentError, getDType } from '@tilekit/numeric';
import type { DTypeName } from '@tilekit/numeric';
import { CodegenTypeError } from './errors.ts';
import { int32, isArithmetic, opaque, typeToString, uint32, voidType } from './cType.ts';
import type { IntType } from './cType.ts';
import { makeCall, makeMember, makeVar } from './expr.ts';
import type { Expr } from './expr.ts';
import { lit, ne, toExpr } from './ops.ts';
import type { ExprLike } from './ops.ts';
import { cudaUnrollPragma } from './render.ts';
import { snippet } from './requirement.ts';
import type { Requirement } from './requirement.ts';
import { exprStmt } from './stmt.ts';
import type { Stmt, Unroll } from './stmt.ts';
import { BaseTarget, checkDim, rangeFor, shuffleValue, stdHeader } from './baseTarget.ts';
import type { Dim, Inlining, ShuffleOptions, Target, TargetFeature } from './target.ts';

const fullMask = (): Expr => lit(0xffffffff, uint32);

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

/** CUDA for Ampere (A100): mma.sync, cp.async, ldmatrix. */
export const sm80: Target = new CudaTarget('sm_80', cudaCommon);
/**
 * CUDA for Hopper with arch-specific features (`sm_90a`: wgmma, TMA, clusters, setmaxnreg; and the
 * sm_90 mbarrier transaction counts, `elect.sync`, `griddepcontrol`, vector `red.global`).
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
  'vector-red',
]);
