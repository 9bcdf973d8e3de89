// The behaviour the targets share (BaseTarget) and the helpers of their dialects.
import { ArgumentError, getDType } from '@tilekit/numeric';
import type { DTypeName } from '@tilekit/numeric';
import { CodegenTypeError, TargetFeatureError } from './errors.ts';
import { array, float32, int8, int32, int64, opaque, typeToString, uint8 } from './cType.ts';
import type { CType, IntType } from './cType.ts';
import type { Expr, IntRange, VarExpr } from './expr.ts';
import { lit, toExpr } from './ops.ts';
import type { ExprLike } from './ops.ts';
import { include } from './requirement.ts';
import type { Requirement } from './requirement.ts';
import type { Stmt, Unroll } from './stmt.ts';
import type { BlockBuilder } from './blockBuilder.ts';
import type { Dim, Inlining, Language, SharedOptions, ShuffleOptions, Target, TargetFeature, TargetName } from './target.ts';

const dims: readonly Dim[] = ['x', 'y', 'z'];

/** Throw `ArgumentError` unless `dim` is `x`, `y` or `z`. */
export function checkDim(dim: Dim): void {
  if (!dims.includes(dim)) throw new ArgumentError('dim', 'must be "x", "y" or "z"', dim);
}

/** Hardware limits as ranges: threadIdx x/y < 1024, z < 64; blockIdx x < 2^31 - 1, y/z < 65535. */
const limits = {
  threadIdx: { x: [0n, 1023n], y: [0n, 1023n], z: [0n, 63n] },
  blockDim: { x: [1n, 1024n], y: [1n, 1024n], z: [1n, 64n] },
  blockIdx: { x: [0n, 2147483646n], y: [0n, 65534n], z: [0n, 65534n] },
  gridDim: { x: [1n, 2147483647n], y: [1n, 65535n], z: [1n, 65535n] },
} as const;

/** The index variables whose hardware limits `rangeFor` knows. */
export type IndexVariable = keyof typeof limits;

/** The hardware range of index variable `what` along `dim`. */
export function rangeFor(what: IndexVariable, dim: Dim): IntRange {
  const [min, max] = limits[what][dim];
  return { min, max };
}

/** Throw `CodegenTypeError` unless a shuffle on `target` can move `value` (32/64-bit integer, float, opaque). */
export function shuffleValue(target: string, value: Expr): void {
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
export const stdHeader = (h: string): Requirement => include(`<${h}>`);

/** Shared behaviour; subclasses fill in the dialect. */
export abstract class BaseTarget implements Target {
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
