import type { BoundTensorAdaptor } from './adaptor.ts';
import { checkStage, formatGraph, TensorAdaptor, transformTensorAdaptor } from './adaptor.ts';
import { checkTensorIndex } from './checkTensorIndex.ts';
import { ArityMismatchError, HiddenGraphError, InvalidParameterError } from './errors.ts';
import { NO_BINDINGS, type Bindings } from './symbolic/evaluate.ts';
import { formatSymInt, type SymInt } from './symbolic/expr.ts';
import { add, mul, neg, product, sub } from './symbolic/poly.ts';
import { mod, roundUp } from './symbolic/simplify.ts';
import { embed } from './transforms/embed.ts';
import { passThrough } from './transforms/passThrough.ts';
import { rightPad } from './transforms/rightPad.ts';
import { checkLength, checkNonNegative, type Transform, type VectorLengthsStrides } from './transforms/transform.ts';
import { unmerge } from './transforms/unmerge.ts';

/**
 * CK-tile's `tensor_descriptor`: an adaptor whose bottom is the single hidden dim 0 (the linear
 * element offset), plus the element-space size (the number of elements the offsets may address)
 * and per-hidden-dim guaranteed vector lengths/strides (−1 = none; the "alignment" knob).
 *
 * Top dims are the tensor's dims (`lengths`); `calculateOffset(i)` = bottom index of i.
 */
export class TensorDescriptor {
  readonly adaptor: TensorAdaptor;
  readonly elementSpaceSize: SymInt;
  readonly guaranteedVectorLengths: readonly number[];
  readonly guaranteedVectorStrides: readonly number[];
  private vectors: VectorLengthsStrides | undefined;
  private readonly bound = new WeakMap<Bindings, BoundTensorDescriptor>();

  constructor(
    adaptor: TensorAdaptor,
    elementSpaceSize: SymInt,
    guaranteedVectorLengths?: readonly number[],
    guaranteedVectorStrides?: readonly number[],
  ) {
    if (adaptor.bottomDimHiddenIds.length !== 1 || adaptor.bottomDimHiddenIds[0] !== 0) {
      throw new HiddenGraphError(
        `a descriptor's bottom must be exactly hidden dim 0, the offset (got [${adaptor.bottomDimHiddenIds.join(', ')}])`,
      );
    }
    checkLength(elementSpaceSize, 'TensorDescriptor elementSpaceSize');
    const n = adaptor.numHiddenDims;
    const lens = guaranteedVectorLengths ?? new Array<number>(n).fill(-1);
    const strides = guaranteedVectorStrides ?? new Array<number>(n).fill(-1);
    checkVectorFacts(lens, n, 'TensorDescriptor guaranteedVectorLengths', 1);
    checkVectorFacts(strides, n, 'TensorDescriptor guaranteedVectorStrides', 0);
    this.adaptor = adaptor;
    this.elementSpaceSize = elementSpaceSize;
    this.guaranteedVectorLengths = [...lens];
    this.guaranteedVectorStrides = [...strides];
  }

  /** Lengths of the tensor's (top) dims. */
  get lengths(): readonly SymInt[] {
    return this.adaptor.topLengths;
  }

  get numDims(): number {
    return this.adaptor.numTopDims;
  }

  /** Π lengths: the number of indices (not the element space, which counts addressable offsets). */
  get elementSize(): SymInt {
    return this.adaptor.elementSize;
  }

  get isStatic(): boolean {
    return this.adaptor.isStatic && typeof this.elementSpaceSize === 'number';
  }

  /** The numeric form for `bindings`, cached per bindings object. */
  bind(bindings: Bindings = NO_BINDINGS): BoundTensorDescriptor {
    const key = this.adaptor.isStatic ? NO_BINDINGS : bindings;
    let b = this.bound.get(key);
    if (b === undefined) {
      b = new BoundTensorDescriptor(this, this.adaptor.bind(key));
      this.bound.set(key, b);
    }
    return b;
  }

  /**
   * CK's `calculate_offset`: the element offset of `index`, unchecked (the hot path): defined for
   * valid indices only; an index outside the lengths or in a padding gives an aliased offset.
   */
  calculateOffset(index: readonly number[], bindings?: Bindings): number {
    return this.bind(bindings).calculateOffset(index);
  }

  /**
   * `calculateOffset` behind CK's validity check (`checkTensorIndex`): throws
   * `InvalidTensorIndexError` naming the dim, the entry and the length when `index` is outside the
   * lengths or in a padding. Postcondition: equals `calculateOffset(index)` whenever
   * `isValidIndex(index)`, and throws exactly when it is not.
   */
  calculateOffsetChecked(index: readonly number[], bindings?: Bindings): number {
    return this.bind(bindings).calculateOffsetChecked(index);
  }

  /**
   * CK's `coordinate_has_valid_offset` for a plain index: `index` lies inside `lengths` and every
   * runtime-checked transform (the pads) accepts it; always-valid transforms (merge, unmerge,
   * embed, …) add no condition. `calculateOffsetChecked` throws exactly when this is false.
   */
  isValidIndex(index: readonly number[], bindings?: Bindings): boolean {
    return this.bind(bindings).isValidIndex(index);
  }

  /**
   * CK's `get_top_dimension_safe_vector_length_strides`: per top dim, the longest run of consecutive
   * indices (starting at a multiple of the length) that is uniformly valid and moves the offset by a
   * constant stride, and that stride (−1 = unknown). Computed bottom-up from the guaranteed facts
   * through each transform's vector rule; a guarantee on a dim overrides the propagated value.
   * Postcondition (checked by brute force): never claims more than is true.
   */
  safeVectorLengthsStrides(): VectorLengthsStrides {
    if (this.vectors === undefined) this.vectors = propagateVectors(this);
    return this.vectors;
  }

  /** Safe vector length of top dim `dim` (1 when nothing is known). */
  safeVectorLength(dim: number): number {
    const v = this.safeVectorLengthsStrides().lengths[dim];
    if (v === undefined) throw new InvalidParameterError('safeVectorLength dim', `must be in [0, ${this.numDims})`, String(dim));
    return Math.max(1, v);
  }

  /** Multi-line readable form (for errors and golden tests). */
  toString(): string {
    const v = this.safeVectorLengthsStrides();
    const vec = v.lengths.map((l, i) => (l > 1 ? `${l}×${v.strides[i] ?? -1}` : '-')).join(', ');
    return formatGraph(
      'TensorDescriptor',
      this.adaptor,
      `lengths (${this.lengths.map(formatSymInt).join(', ')}), elementSpaceSize ${formatSymInt(this.elementSpaceSize)}`,
      [`vectors (${vec})`],
    );
  }
}

/** One fact per hidden dim, each −1 (unknown) or an integer ≥ `min`. */
function checkVectorFacts(facts: readonly number[], n: number, what: string, min: number): void {
  if (facts.length !== n) throw new ArityMismatchError(`${what} (one per hidden dim)`, n, facts.length);
  facts.forEach((v, i) => {
    if (v !== -1 && (!Number.isSafeInteger(v) || v < min))
      throw new InvalidParameterError(`${what}[${i}]`, `must be −1 (unknown) or an integer ≥ ${min}`, String(v));
  });
}

function propagateVectors(desc: TensorDescriptor): VectorLengthsStrides {
  const a = desc.adaptor;
  const lens = [...desc.guaranteedVectorLengths];
  const strides = [...desc.guaranteedVectorStrides];
  a.transforms.forEach((t, i) => {
    const low = a.lowerDimHiddenIds[i]!;
    const up = t.upperVectorLengthsStrides({ lengths: low.map((id) => lens[id]!), strides: low.map((id) => strides[id]!) });
    a.upperDimHiddenIds[i]!.forEach((id, j) => {
      if (desc.guaranteedVectorLengths[id] === -1) {
        lens[id] = up.lengths[j]!;
        strides[id] = up.strides[j]!;
      }
    });
  });
  return { lengths: a.topDimHiddenIds.map((id) => lens[id]!), strides: a.topDimHiddenIds.map((id) => strides[id]!) };
}

/** A descriptor with every symbol bound: the numeric evaluator. */
export class BoundTensorDescriptor {
  readonly descriptor: TensorDescriptor;
  readonly adaptor: BoundTensorAdaptor;
  private readonly scratch: number[];

  constructor(descriptor: TensorDescriptor, adaptor: BoundTensorAdaptor) {
    this.descriptor = descriptor;
    this.adaptor = adaptor;
    this.scratch = new Array<number>(descriptor.adaptor.numHiddenDims).fill(0);
  }

  get lengths(): readonly number[] {
    return this.adaptor.topLengths;
  }

  /** Offset of `index` (hidden dim 0 after a full evaluation). */
  calculateOffset(index: readonly number[]): number {
    if (index.length !== this.adaptor.topLengths.length)
      throw new ArityMismatchError('tensor index', this.adaptor.topLengths.length, index.length);
    this.adaptor.fillHidden(index, this.scratch);
    return this.scratch[0]!;
  }

  /** `calculateOffset` after `checkTensorIndex` (see `TensorDescriptor.calculateOffsetChecked`). */
  calculateOffsetChecked(index: readonly number[]): number {
    checkTensorIndex(this.adaptor, index);
    return this.calculateOffset(index);
  }

  /** Offset and validity together (one evaluation; validity assumes `index` is inside `lengths`). */
  evaluate(index: readonly number[]): { offset: number; valid: boolean } {
    if (index.length !== this.adaptor.topLengths.length)
      throw new ArityMismatchError('tensor index', this.adaptor.topLengths.length, index.length);
    this.adaptor.fillHidden(index, this.scratch);
    return { offset: this.scratch[0]!, valid: this.adaptor.isValidHidden(this.scratch) };
  }

  /** `index` inside `lengths` and accepted by every padding predicate. */
  isValidIndex(index: readonly number[]): boolean {
    if (!this.adaptor.isTopInRange(index)) return false;
    this.adaptor.fillHidden(index, this.scratch);
    return this.adaptor.isValidHidden(this.scratch);
  }
}

function checkSameLength(what: string, expected: number, found: number): void {
  if (expected !== found) throw new ArityMismatchError(what, expected, found);
}

/** Each length a safe integer ≥ 1 (or provably ≥ 1), named as the caller passed it (`<what>[i]`). */
function checkLengths(lengths: readonly SymInt[], what: string): void {
  if (lengths.length === 0) throw new ArityMismatchError(`${what} (at least one)`, 1, 0);
  lengths.forEach((l, i) => checkLength(l, `${what}[${i}]`));
}

/** Each stride an integer ≥ 0 (or provably ≥ 0): offsets of in-range indices stay in [0, elementSpaceSize). */
function checkStrides(strides: readonly SymInt[], what: string): void {
  strides.forEach((s, i) => checkNonNegative(s, `${what}[${i}]`));
}

function checkVector(vectorLength: number | undefined, what: string): void {
  if (vectorLength !== undefined && (!Number.isSafeInteger(vectorLength) || vectorLength < 1)) {
    throw new InvalidParameterError(what, 'must be an integer ≥ 1', String(vectorLength));
  }
}

/** Options of `makeNaiveTensorDescriptor`: the caller's guarantee about the last dim. */
export interface NaiveVectorGuarantee {
  /** Runs of this many consecutive last-dim indices starting at multiples of it are contiguous with `vectorStride` and aligned to it. */
  readonly vectorLength?: number;
  /** Offset step between those elements (≥ 0); defaults to the last stride when that is static, required otherwise. */
  readonly vectorStride?: number;
}

/**
 * CK's `make_naive_tensor_descriptor`: one `embed` from the N dims into the offset (hidden 0, dims
 * hidden 1..N); elementSpaceSize = 1 + Σ (len_i − 1)·stride_i. The optional vector guarantee is
 * attached to the last dim only; it is the caller's promise (e.g. `kAlignmentQ`).
 */
export function makeNaiveTensorDescriptor(
  lengths: readonly SymInt[],
  strides: readonly SymInt[],
  guarantee: NaiveVectorGuarantee = {},
): TensorDescriptor {
  checkLengths(lengths, 'makeNaiveTensorDescriptor lengths');
  checkSameLength('makeNaiveTensorDescriptor strides (one per length)', lengths.length, strides.length);
  checkStrides(strides, 'makeNaiveTensorDescriptor strides');
  checkVector(guarantee.vectorLength, 'makeNaiveTensorDescriptor vectorLength');
  const n = lengths.length;
  const lastStride = strides[n - 1]!;
  let vectorStride = guarantee.vectorStride;
  if (vectorStride === undefined && guarantee.vectorLength !== undefined && typeof lastStride === 'number') vectorStride = lastStride;
  if (vectorStride !== undefined && typeof lastStride === 'number' && vectorStride !== lastStride) {
    throw new InvalidParameterError(
      'makeNaiveTensorDescriptor vectorStride',
      `must equal the last stride ${lastStride}`,
      String(vectorStride),
    );
  }
  if (guarantee.vectorLength !== undefined && (vectorStride === undefined || !Number.isSafeInteger(vectorStride) || vectorStride < 0)) {
    // −1 means "unknown" in the vector tables, so a guarantee needs a known, non-negative stride.
    throw new InvalidParameterError(
      'makeNaiveTensorDescriptor vectorStride',
      'a vector guarantee needs a known stride ≥ 0 (give vectorStride when the last stride is symbolic)',
      String(vectorStride),
    );
  }
  const ids = Array.from({ length: n }, (_, i) => i + 1);
  const adaptor = new TensorAdaptor([embed(lengths, strides)], [[0]], [ids], [0], ids);
  const space = add(1, ...lengths.map((l, i) => mul(sub(l, 1), strides[i]!)));
  const vl = new Array<number>(n + 1).fill(-1);
  const vs = new Array<number>(n + 1).fill(-1);
  if (guarantee.vectorLength !== undefined) {
    vl[n] = guarantee.vectorLength;
    vs[n] = vectorStride!;
  }
  return new TensorDescriptor(adaptor, space, vl, vs);
}

/**
 * CK's `make_naive_tensor_descriptor_packed`: one `unmerge` (row-major, last dim stride 1);
 * elementSpaceSize = Π lengths. The offset dim carries (elementSpaceSize, 1) when static, so a
 * static last dim is a contiguous run; `vectorLength` is the caller's guarantee for a symbolic one.
 */
export function makeNaiveTensorDescriptorPacked(lengths: readonly SymInt[], vectorLength?: number): TensorDescriptor {
  checkLengths(lengths, 'makeNaiveTensorDescriptorPacked lengths');
  checkVector(vectorLength, 'makeNaiveTensorDescriptorPacked vectorLength');
  const n = lengths.length;
  const ids = Array.from({ length: n }, (_, i) => i + 1);
  const adaptor = new TensorAdaptor([unmerge(lengths)], [[0]], [ids], [0], ids);
  const space = product(lengths);
  const vl = new Array<number>(n + 1).fill(-1);
  const vs = new Array<number>(n + 1).fill(-1);
  if (typeof space === 'number') {
    vl[0] = space;
    vs[0] = 1;
  }
  if (vectorLength !== undefined && typeof lengths[n - 1] !== 'number') {
    vl[n] = vectorLength;
    vs[n] = 1;
  }
  return new TensorDescriptor(adaptor, space, vl, vs);
}

/**
 * CK's `make_naive_tensor_descriptor_aligned`: row-major strides where the stride of dim N−2 is the
 * last length rounded up to a multiple of `align` (row padding, e.g. for shared memory).
 */
export function makeNaiveTensorDescriptorAligned(lengths: readonly SymInt[], align: SymInt): TensorDescriptor {
  const n = lengths.length;
  checkLengths(lengths, 'makeNaiveTensorDescriptorAligned lengths');
  checkLength(align, 'makeNaiveTensorDescriptorAligned align');
  const strides = new Array<SymInt>(n);
  strides[n - 1] = 1;
  if (n >= 2) {
    strides[n - 2] = roundUp(lengths[n - 1]!, align);
    for (let i = n - 3; i >= 0; i--) strides[i] = mul(strides[i + 1]!, lengths[i + 1]!);
  }
  return makeNaiveTensorDescriptor(lengths, strides);
}

/**
 * CK's `transform_tensor_descriptor` = `transformTensorAdaptor` on the descriptor's adaptor, same
 * element space, guaranteed vector facts extended with −1 for the new hidden dims.
 */
export function transformTensorDescriptor(
  desc: TensorDescriptor,
  transforms: readonly Transform[],
  lowerDimIds: readonly (readonly number[])[],
  upperDimIds: readonly (readonly number[])[],
): TensorDescriptor {
  checkStage('transformTensorDescriptor', transforms, lowerDimIds, upperDimIds, desc.numDims, desc.lengths);
  const adaptor = transformTensorAdaptor(desc.adaptor, transforms, lowerDimIds, upperDimIds);
  const extra = adaptor.numHiddenDims - desc.adaptor.numHiddenDims;
  const minus = new Array<number>(extra).fill(-1);
  return new TensorDescriptor(
    adaptor,
    desc.elementSpaceSize,
    [...desc.guaranteedVectorLengths, ...minus],
    [...desc.guaranteedVectorStrides, ...minus],
  );
}

/**
 * CK's `pad_tensor_view` on a descriptor: dim i is right-padded to a multiple of `tileLengths[i]`
 * when `doPads[i]` (padding indices are invalid), else passed through. Dims keep their positions.
 */
export function padTensorDescriptor(desc: TensorDescriptor, tileLengths: readonly SymInt[], doPads: readonly boolean[]): TensorDescriptor {
  checkSameLength('padTensorDescriptor tileLengths (one per dim)', desc.numDims, tileLengths.length);
  checkSameLength('padTensorDescriptor doPads (one per dim)', desc.numDims, doPads.length);
  const transforms = desc.lengths.map((len, i) => {
    if (!doPads[i]) return passThrough(len);
    const tile = checkLength(tileLengths[i]!, `padTensorDescriptor tileLengths[${i}]`);
    return rightPad(len, mod(neg(len), tile)); // roundUp(len, tile) − len, provably in [0, tile)
  });
  const ids = desc.lengths.map((_, i) => [i]);
  return transformTensorDescriptor(desc, transforms, ids, ids);
}
