// The host target (g++).
import { getDType } from '@tilekit/numeric';
import type { DTypeName } from '@tilekit/numeric';
import { uint32 } from './cType.ts';
import type { Expr } from './expr.ts';
import type { Requirement } from './requirement.ts';
import type { Stmt, Unroll } from './stmt.ts';
import { BaseTarget, stdHeader } from './baseTarget.ts';
import type { Inlining, Target, TargetFeature } from './target.ts';

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

/** Plain C++17 for g++ (tests, host references). */
export const host: Target = new HostTarget();
