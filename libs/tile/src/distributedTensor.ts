import {
  cast,
  div,
  int32,
  isArithmetic,
  lit,
  mod,
  typeToString,
  verbatim,
  type CType,
  type Expr,
  type ExprLike,
  type BlockBuilder,
} from '@tilekit/codegen';
import { emitCalculateBottomIndex } from '@tilekit/layout';
import { TileEmitError } from './errors.ts';
import { splitMixedRadix, type TileDistributionEncoding } from './tileDistributionEncoding.ts';
import type { BlockEmitter, RegisterArray, ThreadScope } from './blockEmitter.ts';

/**
 * CK's `static_distributed_tensor<T, Dstr>` in emitted code: a register tile. Each thread of the
 * block holds `encoding.threadBufferSize` elements of `type`, element d being the tile element of
 * Y index `encoding.calculateYIndex(d)`; thread t is partition index `encoding.partitionIndexOf(t)`.
 * The TS-side value of a distributed tensor is a {@link ThreadBuffers} table.
 */
export class DistributedTensor {
  readonly encoding: TileDistributionEncoding;
  readonly type: CType;
  readonly registers: RegisterArray;

  constructor(encoding: TileDistributionEncoding, type: CType, registers: RegisterArray) {
    if (registers.length < encoding.threadBufferSize)
      throw new TileEmitError(
        'DistributedTensor registers',
        `need at least ${encoding.threadBufferSize} elements`,
        String(registers.length),
      );
    this.encoding = encoding;
    this.type = type;
    this.registers = registers;
  }

  /** Number of elements per thread (Π Y lengths). */
  get size(): number {
    return this.encoding.threadBufferSize;
  }

  /** Element `d` of the calling thread's buffer (an lvalue). */
  at(t: ThreadScope, d: number): Expr {
    return this.registers.at(t, d);
  }
}

/** A distributed tensor's TS value: `buffers[thread][d]` (the thread-buffer of every thread of the block). */
export type ThreadBuffers = number[][];

/** Declares the registers of a new distributed tensor (uninitialized) in `block`. */
export function makeDistributedTensor(
  block: BlockEmitter,
  name: string,
  encoding: TileDistributionEncoding,
  type: CType,
): DistributedTensor {
  if (encoding.numThreads !== block.numThreads) {
    throw new TileEmitError(
      'makeDistributedTensor',
      `the encoding's threads (Π P lengths) must equal the block's ${block.numThreads}`,
      String(encoding.numThreads),
    );
  }
  return new DistributedTensor(encoding, type, block.registers(name, type, encoding.threadBufferSize));
}

/** The zero of `type`: a literal for arithmetic types, `T{}` (value-initialized) otherwise. */
export function zeroOf(type: CType): Expr {
  if (isArithmetic(type)) return lit(0, type);
  if (type.kind === 'opaque') return verbatim(`${type.cpp}{}`, type, { pure: true });
  throw new TileEmitError('zeroOf', 'register elements must be arithmetic or opaque types', typeToString(type));
}

/**
 * The calling thread's partition index as `int` expressions (row-major split of the thread id over
 * the P lengths, as `partitionIndexOf`); static divisions fold to shifts/masks where they can.
 */
export function emitPartitionIndex(t: ThreadScope, encoding: TileDistributionEncoding): Expr[] {
  let stride = encoding.numThreads;
  return encoding.pLengths.map((len, p) => {
    stride /= len;
    // A P made only of R digits does not move X: no variable (it would be unused).
    if (encoding.psToRhs[p]!.every((r) => r.major === 0)) return lit(0, int32);
    return t.b.let('p', t.tid.type, mod(div(t.tid, stride), len));
  });
}

/** The X index (in the tile) of element `ys` of the calling thread, as `int` expressions. */
export function emitXIndex(t: ThreadScope, encoding: TileDistributionEncoding, ps: readonly Expr[], ys: readonly number[]): Expr[] {
  return [...emitCalculateBottomIndex(t.b, encoding.psYsToXsAdaptor, [...ps, ...ys], t.block.indexEmitter).bottom];
}

/**
 * CK's `sweep_tile` order: nested over X0 (outermost) … X_{n−1}; inside each X, its Y-owned digits
 * (its distributed span) row-major in H order. Returns the Y indices in visiting order: every Y index
 * of the thread buffer exactly once (tested).
 */
export function sweepOrder(encoding: TileDistributionEncoding): number[][] {
  const spans = encoding.distributedSpans();
  const lens = spans.flatMap((s) => s.map((d) => d.length));
  const ys = spans.flatMap((s) => s.map((d) => d.y));
  const count = lens.reduce((a, b) => a * b, 1);
  const out: number[][] = [];
  for (let k = 0; k < count; k++) {
    const digits = splitMixedRadix(k, lens);
    const y = new Array<number>(encoding.ndimY).fill(0);
    ys.forEach((yd, i) => (y[yd] = digits[i]!));
    out.push(y);
  }
  return out;
}

/** What `sweepTile` hands its callback for one element. */
export interface SweptElement {
  readonly b: BlockBuilder;
  /** Thread-buffer index. */
  readonly d: number;
  readonly ys: readonly number[];
  /** The element's X index in the tile (runtime: it depends on the thread). */
  readonly x: readonly Expr[];
  /** The register (an lvalue). */
  readonly value: Expr;
}

/**
 * CK's `sweep_tile`: visits every element the calling thread owns, in {@link sweepOrder}, with its
 * thread-buffer index and its X index in the tile. Postcondition (host-dialect test): the X index
 * is `encoding.calculateXIndex(P, ys)` of this thread's P.
 */
export function sweepTile(t: ThreadScope, tensor: DistributedTensor, visit: (e: SweptElement) => void): void {
  const enc = tensor.encoding;
  const ps = emitPartitionIndex(t, enc);
  for (const ys of sweepOrder(enc)) {
    const d = enc.calculateD(ys);
    visit({ b: t.b, d, ys, x: emitXIndex(t, enc, ps, ys), value: tensor.at(t, d) });
  }
}

function checkSameDistribution(what: string, a: DistributedTensor, b: DistributedTensor): void {
  if (!a.encoding.equals(b.encoding))
    throw new TileEmitError(what, 'tensors must have the same distribution', `${a.encoding} and ${b.encoding}`);
}

/**
 * CK's `tile_elementwise_inout`: `out[d] = f(ins[0][d], ins[1][d], …)` for every element of the
 * calling thread (all tensors share one distribution; `out` may be one of `ins`).
 */
export function tileElementwise(
  t: ThreadScope,
  out: DistributedTensor,
  ins: readonly DistributedTensor[],
  f: (values: readonly Expr[], d: number) => ExprLike,
): void {
  ins.forEach((x) => checkSameDistribution('tileElementwise', out, x));
  for (let d = 0; d < out.size; d++)
    t.b.assign(
      out.at(t, d),
      f(
        ins.map((x) => x.at(t, d)),
        d,
      ),
    );
}

/** CK's `cast_tile`: `out[d] = static_cast<out type>(in[d])` (same distribution). */
export function castTile(t: ThreadScope, out: DistributedTensor, input: DistributedTensor): void {
  tileElementwise(t, out, [input], ([v]) => cast(v!, out.type));
}

/** CK's `set_tile`: every element of the calling thread's buffer becomes `value`. */
export function setTile(t: ThreadScope, tensor: DistributedTensor, value: ExprLike): void {
  for (let d = 0; d < tensor.size; d++) t.b.assign(tensor.at(t, d), value);
}

/** CK's `clear_tile`: every element becomes zero. */
export function clearTile(t: ThreadScope, tensor: DistributedTensor): void {
  setTile(t, tensor, zeroOf(tensor.type));
}
