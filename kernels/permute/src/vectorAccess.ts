// Vector memory accesses and thread-to-work mapping for the permute kernels: small builders over
// codegen (typed expressions) and layout (a merge adaptor stands in for a tile distribution until
// libs/tile exists). Kernel bodies use only these and layout descriptors for addressing.
import {
  bitOr,
  call,
  cast,
  deref,
  add,
  int32,
  opaque,
  pointer,
  shl,
  uint16,
  uint32,
  type BlockBuilder,
  type CType,
  type Expr,
  type ExprLike,
} from '@tilekit/codegen';
import { emitCalculateBottomIndex, makeSingleStageTensorAdaptor, merge, type IndexEmitter } from '@tilekit/layout';
import { ArgumentError } from '@tilekit/numeric';

/** Bytes a vector access may move: 2 (one fp16) up to 16 (`uint4`, one LDG.128/STG.128). */
export type VectorBytes = 2 | 4 | 8 | 16;

const uint2 = opaque('uint2');
const uint4 = opaque('uint4');

/** The CUDA type that holds `bytes` bytes of raw bits: `unsigned short`, `unsigned int`, `uint2`, `uint4`. */
export function vectorType(bytes: VectorBytes): CType {
  switch (bytes) {
    case 2:
      return uint16;
    case 4:
      return uint32;
    case 8:
      return uint2;
    case 16:
      return uint4;
  }
}

/** The raw-bits type of one element of `elementBytes` bytes (2 → `unsigned short`, 4 → `unsigned int`). */
export function elementBitsType(elementBytes: 2 | 4): CType {
  return elementBytes === 2 ? uint16 : uint32;
}

/** `*reinterpret_cast<const V*>(base + offset)`: a `bytes`-wide load at element `offset` of `base`. */
export function loadVector(base: Expr, offset: ExprLike, bytes: VectorBytes): Expr {
  return deref(cast(add(base, offset), pointer(vectorType(bytes), { const: true })));
}

/** The lvalue `*reinterpret_cast<V*>(base + offset)` to store a `bytes`-wide vector into. */
export function vectorLvalue(base: Expr, offset: ExprLike, bytes: VectorBytes): Expr {
  return deref(cast(add(base, offset), pointer(vectorType(bytes))));
}

/**
 * Packs `elements` (raw bits of `elementBytes` each, lowest address first) into one vector of their
 * total size: pairs of 16-bit elements become 32-bit words (little-endian: the first in the low
 * half), words become `uint2` / `uint4` via `make_uint2` / `make_uint4`.
 */
export function packVector(elements: readonly Expr[], elementBytes: 2 | 4): Expr {
  const bytes = elements.length * elementBytes;
  if (bytes === elementBytes) return elements[0]!;
  const words: Expr[] = [];
  if (elementBytes === 4) words.push(...elements);
  else {
    for (let i = 0; i < elements.length; i += 2) {
      words.push(bitOr(cast(elements[i]!, uint32), shl(cast(elements[i + 1]!, uint32), 16)));
    }
  }
  if (words.length === 1) return words[0]!;
  if (words.length === 2) return call('make_uint2', words, uint2, { pure: true });
  if (words.length === 4) return call('make_uint4', words, uint4, { pure: true });
  throw new ArgumentError('elements', 'must pack into 2, 4, 8 or 16 bytes', bytes);
}

/**
 * Splits a linear index into digits of `lengths` (row-major, last fastest) through a layout merge
 * adaptor; static lengths fold to shifts and masks. `linear` must lie in [0, Π lengths).
 */
export function distribute(b: BlockBuilder, emitter: IndexEmitter, linear: Expr, lengths: readonly number[]): Expr[] {
  const adaptor = makeSingleStageTensorAdaptor([merge(lengths)], [lengths.map((_, i) => i)], [[0]]);
  return [...emitCalculateBottomIndex(b, adaptor, [linear], emitter).bottom].map((e) => (e.kind === 'literal' ? cast(e, int32) : e));
}
