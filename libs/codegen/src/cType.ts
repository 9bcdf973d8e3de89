import { ArgumentError } from '@tilekit/numeric';
import type { Requirement } from './requirement.ts';

/** Names of the C++ integer types the expression layer models exactly. */
export type IntName = 'int8' | 'uint8' | 'int16' | 'uint16' | 'int32' | 'uint32' | 'int64' | 'uint64';

/**
 * A C++ integer type. The spellings are the fundamental types, not `<cstdint>` typedefs, so emitted
 * code needs no header and literal suffixes match exactly: int32 = `int` (literal `5`), uint32 =
 * `unsigned int` (`5u`), int64 = `long long` (`5ll`), uint64 = `unsigned long long` (`5ull`);
 * int8/uint8/int16/uint16 = `signed char`/`unsigned char`/`short`/`unsigned short` (no suffix
 * exists: literals print as `static_cast<short>(5)`). Widths hold on every target (LP64 host, CUDA,
 * HIP). `rank` orders conversion rank (8 < 16 < 32 < 64 bits).
 */
export interface IntType {
  readonly kind: 'int';
  readonly name: IntName;
  readonly bits: 8 | 16 | 32 | 64;
  readonly signed: boolean;
  readonly cpp: string;
  readonly min: bigint;
  readonly max: bigint;
}

/** C++ `bool`. */
export interface BoolType {
  readonly kind: 'bool';
  readonly name: 'bool';
  readonly cpp: 'bool';
}

/** IEEE binary32 `float` or binary64 `double`. */
export interface FloatType {
  readonly kind: 'float';
  readonly name: 'float32' | 'float64';
  readonly bits: 32 | 64;
  readonly cpp: 'float' | 'double';
}

/** `void`: the type of calls made for their effect (`__syncthreads()`). */
export interface VoidType {
  readonly kind: 'void';
  readonly name: 'void';
  readonly cpp: 'void';
}

/**
 * A named type the expression layer does not compute with (`__half`, `dim3`, `float4`, a struct):
 * values of it can be passed, stored, cast and accessed, but not added. `requires` lists the headers
 * or snippets that declare it.
 */
export interface OpaqueType {
  readonly kind: 'opaque';
  readonly name: string;
  readonly cpp: string;
  readonly requires: readonly Requirement[];
}

/** `T*`, optionally pointing to const (`const T*`) and `__restrict__`-qualified. */
export interface PointerType {
  readonly kind: 'pointer';
  readonly pointee: CType;
  readonly constPointee: boolean;
  readonly restrict: boolean;
}

/** `T[length]`: only as the type of a declared array (e.g. shared memory) and its index base. */
export interface ArrayType {
  readonly kind: 'array';
  readonly element: CType;
  readonly length: number;
}

/** Every C++ type an expression node can have. */
export type CType = IntType | BoolType | FloatType | VoidType | OpaqueType | PointerType | ArrayType;

/** A type with arithmetic meaning: integers, bool (promotes to int) and floating point. */
export type ArithmeticType = IntType | BoolType | FloatType;

function intType(name: IntName, bits: 8 | 16 | 32 | 64, signed: boolean, cpp: string): IntType {
  const min = signed ? -(1n << BigInt(bits - 1)) : 0n;
  const max = signed ? (1n << BigInt(bits - 1)) - 1n : (1n << BigInt(bits)) - 1n;
  return Object.freeze({ kind: 'int', name, bits, signed, cpp, min, max });
}

/** `signed char`. */
export const int8: IntType = intType('int8', 8, true, 'signed char');
/** `unsigned char`. */
export const uint8: IntType = intType('uint8', 8, false, 'unsigned char');
/** `short`. */
export const int16: IntType = intType('int16', 16, true, 'short');
/** `unsigned short`. */
export const uint16: IntType = intType('uint16', 16, false, 'unsigned short');
/** `int` (32-bit on every target). */
export const int32: IntType = intType('int32', 32, true, 'int');
/** `unsigned int`. */
export const uint32: IntType = intType('uint32', 32, false, 'unsigned int');
/** `long long` (64-bit). */
export const int64: IntType = intType('int64', 64, true, 'long long');
/** `unsigned long long`. */
export const uint64: IntType = intType('uint64', 64, false, 'unsigned long long');
/** `bool`. */
export const bool: BoolType = Object.freeze({ kind: 'bool', name: 'bool', cpp: 'bool' });
/** `float` (IEEE binary32). */
export const float32: FloatType = Object.freeze({ kind: 'float', name: 'float32', bits: 32, cpp: 'float' });
/** `double` (IEEE binary64). */
export const float64: FloatType = Object.freeze({ kind: 'float', name: 'float64', bits: 64, cpp: 'double' });
/** `void`. */
export const voidType: VoidType = Object.freeze({ kind: 'void', name: 'void', cpp: 'void' });

/** CK-tile's `index_t`: the default index type for emitted index arithmetic (int32 = `int`). */
export const indexType: IntType = int32;
/** CK-tile's `long_index_t`: 64-bit index arithmetic (`long long`). */
export const longIndexType: IntType = int64;

/** Every integer type by name. */
export const intTypes: Readonly<Record<IntName, IntType>> = Object.freeze({
  int8,
  uint8,
  int16,
  uint16,
  int32,
  uint32,
  int64,
  uint64,
});

const identifierPath = /^(::)?[A-Za-z_][A-Za-z0-9_]*(::[A-Za-z_][A-Za-z0-9_]*)*(<[^;{}]*>)?$/;

/**
 * A named opaque type. `cpp` is the C++ spelling (`__half`, `dim3`, `tk::vec<float, 4>`);
 * `requires` the headers/snippets that declare it.
 */
export function opaque(cpp: string, requires: readonly Requirement[] = []): OpaqueType {
  if (!identifierPath.test(cpp)) {
    throw new ArgumentError('cpp', 'an opaque type must be a (qualified, optionally templated) C++ type name', cpp);
  }
  return Object.freeze({ kind: 'opaque', name: cpp, cpp, requires: Object.freeze([...requires]) });
}

/** Options of a pointer type. */
export interface PointerOptions {
  /** Point to const (`const T*`). Default false. */
  readonly const?: boolean;
  /** Add `__restrict__` (accepted by g++, nvcc and clang). Default false. */
  readonly restrict?: boolean;
}

/** `T*` (or `const T* __restrict__`, by options). */
export function pointer(pointee: CType, options: PointerOptions = {}): PointerType {
  if (pointee.kind === 'array') throw new ArgumentError('pointee', 'pointers to arrays are not modelled', typeToString(pointee));
  return Object.freeze({
    kind: 'pointer',
    pointee,
    constPointee: options.const ?? false,
    restrict: options.restrict ?? false,
  });
}

/** `T[length]`, for array declarations. `length` is a positive integer. */
export function array(element: CType, length: number): ArrayType {
  if (!Number.isSafeInteger(length) || length <= 0) throw new ArgumentError('length', 'must be a positive integer', length);
  if (element.kind === 'void') throw new ArgumentError('element', 'arrays of void do not exist');
  return Object.freeze({ kind: 'array', element, length });
}

/**
 * The C++ spelling of a type as it appears in a cast or a parameter (`const float* __restrict__`).
 * Arrays spell as `float[256]` (declarations put the length after the name instead).
 */
export function typeToString(t: CType): string {
  switch (t.kind) {
    case 'pointer': {
      const inner = typeToString(t.pointee);
      return `${t.constPointee ? 'const ' : ''}${inner}*${t.restrict ? ' __restrict__' : ''}`;
    }
    case 'array':
      return `${typeToString(t.element)}[${t.length}]`;
    default:
      return t.cpp;
  }
}

/** Structural type equality (`const`/`restrict` qualifiers on pointers included). */
export function sameType(a: CType, b: CType): boolean {
  if (a === b) return true;
  if (a.kind !== b.kind) return false;
  switch (a.kind) {
    case 'pointer': {
      const p = b as PointerType;
      return a.constPointee === p.constPointee && a.restrict === p.restrict && sameType(a.pointee, p.pointee);
    }
    case 'array': {
      const arr = b as ArrayType;
      return a.length === arr.length && sameType(a.element, arr.element);
    }
    default:
      return a.cpp === (b as { cpp: string }).cpp;
  }
}

/** Is `t` an integer, bool or floating type? */
export function isArithmetic(t: CType): t is ArithmeticType {
  return t.kind === 'int' || t.kind === 'bool' || t.kind === 'float';
}

/** Is `t` an integer or bool type (the operands of `%`, shifts and bitwise operators)? */
export function isIntegral(t: CType): t is IntType | BoolType {
  return t.kind === 'int' || t.kind === 'bool';
}

/**
 * C++ integral promotion: bool and integer types narrower than `int` become `int`; other types are
 * unchanged. Postcondition: the result of an integral input has at least 32 bits.
 */
export function promote(t: ArithmeticType): IntType | FloatType {
  if (t.kind === 'bool') return int32;
  if (t.kind === 'int' && t.bits < 32) return int32;
  return t;
}

/**
 * The C++ usual arithmetic conversions: the common type of a binary arithmetic operator's operands
 * (double > float > integers; integers promote, then the higher rank wins, unsigned wins at equal
 * rank, and a signed type of higher rank wins only if it can hold every value of the unsigned one).
 */
export function commonType(a: ArithmeticType, b: ArithmeticType): IntType | FloatType {
  const pa = promote(a);
  const pb = promote(b);
  if (pa.kind === 'float' || pb.kind === 'float') {
    if (pa === float64 || pb === float64) return float64;
    return float32;
  }
  if (pa === pb) return pa;
  if (pa.signed === pb.signed) return pa.bits >= pb.bits ? pa : pb;
  const [u, s] = pa.signed ? [pb, pa] : [pa, pb];
  if (u.bits >= s.bits) return u;
  if (s.max >= u.max) return s;
  return s.bits === 64 ? uint64 : uint32;
}

/** The full value range of an integer or bool type, as bigint bounds (bool is [0, 1]). */
export function typeRange(t: IntType | BoolType): { readonly min: bigint; readonly max: bigint } {
  return t.kind === 'bool' ? { min: 0n, max: 1n } : { min: t.min, max: t.max };
}
