// The 2-D transpose kernel: dst[n, m] = src[m, n], through shared memory so that both global sides
// move whole vectors along their contiguous dim.
//
// Kernel: block (blockIdx.x, blockIdx.y) owns the TM × TN tile at (m0, n0) = (y·TM, x·TN).
// 1. Each thread loads V-element vectors of input rows (coalesced along n) and stores them whole
//    into the shared tile.
// 2. After a barrier, each thread gathers V elements of one tile column (V consecutive m at one n),
//    packs them into a vector and stores it to an output row (coalesced along m).
// Shared memory is swizzled with layout's xor transform: the 16-byte chunk index of a row is
// XORed with (m / V) mod chunksPerRow, so phase 1's vector stores and phase 2's column reads hit
// distinct banks (see README). Global offsets and the tail guard come from padded layout
// descriptors; the thread-to-work maps from layout merges.
import {
  add,
  addressOf,
  cast,
  deref,
  index,
  int32,
  KernelSignature,
  kernelParam,
  mul,
  pointer,
  SourceBuilder,
  sm90a,
  type Expr,
  type Target,
} from '@tilekit/codegen';
import {
  IndexEmitter,
  emitCalculateOffset,
  makeNaiveTensorDescriptor,
  makeNaiveTensorDescriptorPacked,
  merge,
  padTensorDescriptor,
  passThrough,
  symbol,
  transformTensorDescriptor,
  unmerge,
  xor,
  type TensorDescriptor,
} from '@tilekit/layout';
import { ArgumentError, getDType } from '@tilekit/numeric';
import type { PermuteDType } from './permuteProblem.ts';
import { distribute, elementBitsType, loadVector, packVector, vectorLvalue, vectorType, type VectorBytes } from './vectorAccess.ts';

/** Index domains of the transpose: `i32` keeps every offset in 32 bits, `i64` admits large tensors. */
export type TransposeIndexDomain = 'i32' | 'i64';

/** Policy of the transpose kernel. */
export interface TransposePolicy {
  readonly dtype: PermuteDType;
  /** Bytes per global access on both sides (must divide m and n in elements). */
  readonly vectorBytes: VectorBytes;
  /** Tile rows (m) and columns (n), elements; multiples of 8 vectors... see `checkTransposePolicy`. */
  readonly tileM: number;
  readonly tileN: number;
  readonly threads: number;
  /** Output vectors along m that consecutive threads take (8 × 16 B = one 128-byte row segment). */
  readonly storeRun: number;
  readonly indexDomain: TransposeIndexDomain;
}

/**
 * Promised maxima of m and n per index domain (checked by dispatch and by `pack`). `i32`: the
 * padded m · n stays below 2^31, so layout emits `int` offsets; `i64`: m up to 65535 tiles of grid.y.
 */
export function transposeDomain(policy: Pick<TransposePolicy, 'indexDomain' | 'tileM'>): { readonly m: number; readonly n: number } {
  return policy.indexDomain === 'i32' ? { m: 46272, n: 46272 } : { m: 65535 * policy.tileM, n: 1 << 30 };
}

function isPow2(x: number): boolean {
  return Number.isSafeInteger(x) && x > 0 && (x & (x - 1)) === 0;
}

/** Throws `ArgumentError` for a policy the kernel cannot be built for. */
export function checkTransposePolicy(policy: TransposePolicy): void {
  const e = getDType(policy.dtype).bytes;
  const V = policy.vectorBytes / e;
  if (!Number.isInteger(V) || V < 1)
    throw new ArgumentError('policy.vectorBytes', `must be a multiple of the element size ${e}`, policy.vectorBytes);
  if (!isPow2(policy.tileM / V) || !isPow2(policy.tileN / V))
    throw new ArgumentError('policy.tile', 'tileM / V and tileN / V must be powers of two', [policy.tileM, policy.tileN]);
  const loads = (policy.tileM * policy.tileN) / V;
  if (loads % policy.threads !== 0) throw new ArgumentError('policy.threads', `must divide the ${loads} vectors of a tile`, policy.threads);
  if ((policy.tileM / V) % policy.storeRun !== 0)
    throw new ArgumentError('policy.storeRun', `must divide tileM / V = ${policy.tileM / V}`, policy.storeRun);
  if (transposeSharedBytes(policy) > 48 * 1024)
    throw new ArgumentError(
      'policy.tile',
      'must fit in the 48 KiB of static shared memory a block may declare',
      transposeSharedBytes(policy),
    );
}

/** The kernel's parameters, in order. */
export function transposeParams(policy: TransposePolicy, target: Target = sm90a) {
  const element = target.dtypeType(policy.dtype);
  const domain = transposeDomain(policy);
  return {
    src: kernelParam.pointer(element, { const: true, align: policy.vectorBytes }),
    dst: kernelParam.pointer(element, { align: policy.vectorBytes }),
    mrows: kernelParam.i32({ range: [1, domain.m] }),
    ncols: kernelParam.i32({ range: [1, domain.n] }),
  };
}

/** The kernel's signature: {@link transposeParams} under `name`. */
export function transposeSignature(name: string, policy: TransposePolicy, target: Target = sm90a) {
  return new KernelSignature(name, target, transposeParams(policy, target));
}

/**
 * The shared tile: physical [tileM][chunks][V] elements; viewed as (m, n) for the row-wise stores of
 * phase 1 and as (m / V, m mod V, n) for the column reads of phase 2. The chunk index is swizzled:
 * physical chunk = n / V XOR ((m / V) mod chunks).
 */
export function transposeSharedViews(policy: TransposePolicy): { readonly rows: TensorDescriptor; readonly columns: TensorDescriptor } {
  const V = policy.vectorBytes / getDType(policy.dtype).bytes;
  const TM = policy.tileM;
  const chunks = policy.tileN / V;
  const physical = makeNaiveTensorDescriptorPacked([TM, chunks, V]);
  const split = transformTensorDescriptor(
    physical,
    [unmerge([TM / V, V]), passThrough(chunks), passThrough(V)],
    [[0], [1], [2]],
    [[0, 1], [2], [3]],
  );
  const swizzled = transformTensorDescriptor(
    split,
    [xor([TM / V, chunks]), passThrough(V), passThrough(V)],
    [[0, 2], [1], [3]],
    [[0, 2], [1], [3]],
  );
  return {
    rows: transformTensorDescriptor(
      swizzled,
      [merge([TM / V, V]), merge([chunks, V])],
      [
        [0, 1],
        [2, 3],
      ],
      [[0], [1]],
    ),
    columns: transformTensorDescriptor(
      swizzled,
      [passThrough(TM / V), passThrough(V), merge([chunks, V])],
      [[0], [1], [2, 3]],
      [[0], [1], [2]],
    ),
  };
}

/** Input [m, n] and output [n, m] descriptors, padded to whole tiles (the padding is the tail guard). */
export function transposeGlobalViews(policy: TransposePolicy): { readonly src: TensorDescriptor; readonly dst: TensorDescriptor } {
  const domain = transposeDomain(policy);
  const M = symbol('mrows', { max: domain.m });
  const N = symbol('ncols', { max: domain.n });
  return {
    src: padTensorDescriptor(makeNaiveTensorDescriptor([M, N], [N, 1]), [policy.tileM, policy.tileN], [true, true]),
    dst: padTensorDescriptor(makeNaiveTensorDescriptor([N, M], [M, 1]), [policy.tileN, policy.tileM], [true, true]),
  };
}

/** Static shared memory of the kernel, bytes. */
export function transposeSharedBytes(policy: TransposePolicy): number {
  return policy.tileM * policy.tileN * getDType(policy.dtype).bytes;
}

/** Emits the kernel `name` with `policy` into `src`, entry declared by `signature`. */
export function emitTransposeKernel(
  src: SourceBuilder,
  name: string,
  policy: TransposePolicy,
  target: Target = sm90a,
  signature: ReturnType<typeof transposeSignature> = transposeSignature(name, policy, target),
): void {
  checkTransposePolicy(policy);
  const e = getDType(policy.dtype).bytes as 2 | 4;
  const V = policy.vectorBytes / e;
  const { tileM: TM, tileN: TN, threads: T } = policy;
  const chunks = TN / V;
  const shared = transposeSharedViews(policy);
  const global = transposeGlobalViews(policy);
  const domain = transposeDomain(policy);
  signature.defineEntry(src, { launchBounds: { maxThreads: T } }, (b, p) => {
    const emitter = new IndexEmitter(b, { symbols: { mrows: p.mrows, ncols: p.ncols } });
    const bits = elementBitsType(e);
    const tile = target.declareShared(b, 'tile', bits, TM * TN, { align: 16 });
    const tid = b.let('tid', int32, cast(target.threadIdx('x'), int32), { range: [0, T - 1] });
    const m0 = b.let('m0', int32, mul(cast(target.blockIdx('y'), int32), TM), { range: [0, Math.ceil(domain.m / TM) * TM - TM] });
    const n0 = b.let('n0', int32, mul(cast(target.blockIdx('x'), int32), TN), { range: [0, Math.ceil(domain.n / TN) * TN - TN] });

    b.comment(`phase 1: ${(TM * chunks) / T} input vector(s) per thread, rows of the tile (coalesced along n)`);
    const loads = Array.from({ length: (TM * chunks) / T }, (_, k) => {
      const [r, c] = distribute(b, emitter, b.let('idx', int32, add(tid, k * T)), [TM, chunks]) as [Expr, Expr];
      const at = emitCalculateOffset(b, global.src, [add(m0, r), add(n0, mul(c, V))], emitter);
      const v = b.var('v', vectorType(policy.vectorBytes));
      b.if(at.valid, (t) => t.assign(v, loadVector(p.src, at.offset, policy.vectorBytes)));
      return { r, c, v, valid: at.valid };
    });
    for (const { r, c, v, valid } of loads) {
      const s = emitCalculateOffset(b, shared.rows, [r, mul(c, V)], emitter);
      const slot = cast(addressOf(index(tile, s.offset)), pointer(vectorType(policy.vectorBytes)));
      b.if(valid, (t) => t.assign(deref(slot), v));
    }
    b.push(target.syncThreads());

    const run = policy.storeRun;
    b.comment(`phase 2: ${(TN * (TM / V)) / T} output vector(s) per thread, columns of the tile (coalesced along m)`);
    for (let k = 0; k < (TN * (TM / V)) / T; k++) {
      const [mvHi, nn, mvLo] = distribute(b, emitter, b.let('idx', int32, add(tid, k * T)), [TM / V / run, TN, run]) as [Expr, Expr, Expr];
      const mv = b.let('mv', int32, add(mul(mvHi, run), mvLo), { range: [0, TM / V - 1] });
      const elements = Array.from({ length: V }, (_, j) => {
        const s = emitCalculateOffset(b, shared.columns, [mv, j, nn], emitter);
        return b.let('e', bits, index(tile, s.offset));
      });
      const at = emitCalculateOffset(b, global.dst, [add(n0, nn), add(m0, mul(mv, V))], emitter);
      b.if(at.valid, (t) => t.assign(vectorLvalue(p.dst, at.offset, policy.vectorBytes), packVector(elements, e)));
    }
  });
}

/** One translation unit holding the kernel. */
export function transposeSource(name: string, policy: TransposePolicy, target: Target = sm90a): string {
  const src = new SourceBuilder({
    dialect: target,
    header: [`tilekit permute: ${name}`, 'generated by @tilekit/kernel-permute; do not edit'],
  });
  emitTransposeKernel(src, name, policy, target);
  return src.render();
}
