import { ArgumentError } from '@tilekit/numeric';
import { float32, float64, int8, int16, int32, int64, opaque, pointer, uint8, uint16, uint32, uint64 } from '../cType.ts';
import type { CType, FloatType, IntType, OpaqueType } from '../cType.ts';
import type { RangeLike } from '../blockBuilder.ts';
import type { IntRange } from '../expr.ts';
import { toRange } from '../ops.ts';
import { snippet } from '../requirement.ts';

/** The scalar kinds a kernel parameter can have. */
export type ScalarParamKind = 'i8' | 'u8' | 'i16' | 'u16' | 'i32' | 'u32' | 'i64' | 'u64' | 'f32' | 'f64';

/**
 * A scalar parameter passed by value. `range` (integers only) is a promise about its values: the
 * emitted code may rely on it (the simplifier sees it) and `pack` rejects values outside it.
 */
export interface ScalarParam<K extends ScalarParamKind = ScalarParamKind> {
  readonly kind: 'scalar';
  readonly scalar: K;
  readonly range: IntRange | null;
}

/**
 * A device pointer (`T*`, `const T* __restrict__`). `align` is the byte alignment every address
 * passed must have (the kernel may use vector accesses of that width); `nullable` allows 0.
 */
export interface PointerParam {
  readonly kind: 'pointer';
  readonly pointee: CType;
  readonly const: boolean;
  readonly restrict: boolean;
  readonly align: number;
  readonly nullable: boolean;
}

/** A TMA descriptor passed by value as `const __grid_constant__` (128 bytes, 64-byte aligned). */
export interface TensorMapParam {
  readonly kind: 'tensorMap';
}

/** One declared kernel parameter. */
export type KernelParam = ScalarParam | PointerParam | TensorMapParam;

/** The JS value a parameter takes: numbers (bigint allowed for 64-bit integers), pointers as bigint or `{ ptr }`, tensor maps as 128 bytes. */
export type ParamValue<P extends KernelParam> =
  P extends ScalarParam<infer K>
    ? K extends 'i64' | 'u64'
      ? bigint | number
      : number
    : P extends PointerParam
      ? bigint | { readonly ptr: bigint }
      : P extends TensorMapParam
        ? Uint8Array
        : never;

/** What `unpack` gives back: 64-bit integers and pointers as bigint. */
export type UnpackedValue<P extends KernelParam> =
  P extends ScalarParam<infer K>
    ? K extends 'i64' | 'u64'
      ? bigint
      : number
    : P extends PointerParam
      ? bigint
      : P extends TensorMapParam
        ? Uint8Array
        : never;

interface ScalarInfo {
  readonly size: 1 | 2 | 4 | 8;
  readonly type: IntType | FloatType;
}

/** Size, alignment and C++ type of each scalar kind (natural alignment = size on every CUDA/HIP ABI). */
export const SCALAR_PARAM_KINDS: Readonly<Record<ScalarParamKind, ScalarInfo>> = Object.freeze({
  i8: { size: 1, type: int8 },
  u8: { size: 1, type: uint8 },
  i16: { size: 2, type: int16 },
  u16: { size: 2, type: uint16 },
  i32: { size: 4, type: int32 },
  u32: { size: 4, type: uint32 },
  i64: { size: 8, type: int64 },
  u64: { size: 8, type: uint64 },
  f32: { size: 4, type: float32 },
  f64: { size: 8, type: float64 },
});

/** Bytes of a CUtensorMap and its alignment. */
export const TENSOR_MAP_BYTES = 128;
export const TENSOR_MAP_ALIGN = 64;

/**
 * `tk_tensor_map`: layout-compatible with the driver's `CUtensorMap` (an opaque, 64-byte aligned
 * 128-byte struct), declared here so kernels need no `<cuda.h>` (NVRTC has none).
 */
export const tensorMapType: OpaqueType = opaque('tk_tensor_map', [
  snippet('tk_tensor_map', [
    '// A CUtensorMap by value: 128 opaque bytes, 64-byte aligned (the driver encodes it; TMA reads it).',
    'struct alignas(64) tk_tensor_map { unsigned long long opaque[16]; };',
  ]),
]);

/** Byte size of a parameter in the parameter buffer. */
export function paramSize(p: KernelParam): number {
  if (p.kind === 'scalar') return SCALAR_PARAM_KINDS[p.scalar].size;
  if (p.kind === 'pointer') return 8;
  return TENSOR_MAP_BYTES;
}

/** Byte alignment of a parameter in the parameter buffer (of the value itself, not of what a pointer points to). */
export function paramAlign(p: KernelParam): number {
  if (p.kind === 'scalar') return SCALAR_PARAM_KINDS[p.scalar].size;
  if (p.kind === 'pointer') return 8;
  return TENSOR_MAP_ALIGN;
}

/** The C++ type the kernel body sees for a parameter. */
export function paramCType(p: KernelParam): CType {
  if (p.kind === 'scalar') return SCALAR_PARAM_KINDS[p.scalar].type;
  if (p.kind === 'pointer') return pointer(p.pointee, { const: p.const, restrict: p.restrict });
  return tensorMapType;
}

function isPowerOfTwo(n: number): boolean {
  return Number.isSafeInteger(n) && n > 0 && (n & (n - 1)) === 0;
}

function scalar<K extends ScalarParamKind>(kind: K, options: { readonly range?: RangeLike } = {}): ScalarParam<K> {
  let range: IntRange | null = null;
  if (options.range !== undefined) {
    const info = SCALAR_PARAM_KINDS[kind];
    if (info.type.kind !== 'int') throw new ArgumentError(`${kind} range`, 'only integer parameters take a range', options.range);
    range = toRange(options.range);
    if (range.min > range.max || range.min < info.type.min || range.max > info.type.max) {
      throw new ArgumentError(`${kind} range`, `must satisfy ${info.type.min} <= min <= max <= ${info.type.max}`, options.range);
    }
  }
  return Object.freeze({ kind: 'scalar', scalar: kind, range });
}

/** Options of a pointer parameter. */
export interface PointerParamOptions {
  /** `const T*` (default false). */
  readonly const?: boolean;
  /** `__restrict__` (default true: kernel buffers do not alias unless said so). */
  readonly restrict?: boolean;
  /** Byte alignment every address must have (a power of two; default the pointee's natural 1). */
  readonly align?: number;
  /** Allow a null pointer (default false). */
  readonly nullable?: boolean;
}

/**
 * Builders of kernel parameter declarations:
 *
 * ```ts
 * { src: kernelParam.pointer(half, { const: true, align: 16 }), n: kernelParam.i32({ range: [1, 1 << 20] }),
 *   map: kernelParam.tensorMap(), scale: kernelParam.f32() }
 * ```
 */
export const kernelParam = Object.freeze({
  scalar,
  i8: (options?: { readonly range?: RangeLike }) => scalar('i8', options),
  u8: (options?: { readonly range?: RangeLike }) => scalar('u8', options),
  i16: (options?: { readonly range?: RangeLike }) => scalar('i16', options),
  u16: (options?: { readonly range?: RangeLike }) => scalar('u16', options),
  i32: (options?: { readonly range?: RangeLike }) => scalar('i32', options),
  u32: (options?: { readonly range?: RangeLike }) => scalar('u32', options),
  i64: (options?: { readonly range?: RangeLike }) => scalar('i64', options),
  u64: (options?: { readonly range?: RangeLike }) => scalar('u64', options),
  f32: () => scalar('f32'),
  f64: () => scalar('f64'),
  pointer(pointee: CType, options: PointerParamOptions = {}): PointerParam {
    if (pointee.kind === 'array') throw new ArgumentError('pointee', 'must not be an array type');
    const align = options.align ?? 1;
    if (!isPowerOfTwo(align)) throw new ArgumentError('align', 'must be a power of two', align);
    return Object.freeze({
      kind: 'pointer',
      pointee,
      const: options.const ?? false,
      restrict: options.restrict ?? true,
      align,
      nullable: options.nullable ?? false,
    });
  },
  tensorMap(): TensorMapParam {
    return Object.freeze({ kind: 'tensorMap' });
  },
});
