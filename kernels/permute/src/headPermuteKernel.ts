// The head-permute kernel: dst[b, y, x, :] = src[b, x, y, :] for 4-D tensors whose last dim d is
// contiguous on both sides (bhsd → bshd with x = h, y = s; bshd → bhsd with x = s, y = h).
//
// Kernel: block (blockIdx.x = y block, blockIdx.y = tile, blockIdx.z = b) moves one tile of
// `threads × unroll` vectors of the (x, d / V) plane for each of `rows` consecutive y; every thread
// first issues its `unroll × rows` independent V-element loads, then its stores. Addressing comes
// from two layout descriptors over the same logical index (b, x, y, d), the source's (packed bxyd) and the destination's (packed byxd),
// transformed identically into the work index (b, y, i, v) with i = x · (d / V) + d / V digit:
// the kernel never spells a stride itself.
import { cast, int32, KernelSignature, kernelParam, mul, add, SourceBuilder, sm90a, type Target } from '@tilekit/codegen';
import {
  IndexEmitter,
  emitCalculateOffset,
  makeNaiveTensorDescriptor,
  makeNaiveTensorDescriptorPacked,
  merge,
  padTensorDescriptor,
  passThrough,
  sym,
  symbol,
  transformTensorDescriptor,
  unmerge,
  type TensorDescriptor,
} from '@tilekit/layout';
import { getDType } from '@tilekit/numeric';
import type { PermuteDType } from './permuteProblem.ts';
import { loadVector, vectorLvalue, vectorType, type VectorBytes } from './vectorAccess.ts';

/** Policy of the head-permute kernel: every tiling and vector choice (static functions of the Problem's dtype). */
export interface HeadPermutePolicy {
  readonly dtype: PermuteDType;
  /** Bytes per load/store (16 = one 128-bit access); must divide d · element bytes. */
  readonly vectorBytes: VectorBytes;
  readonly threads: number;
  /** Vectors per thread per tile and row (independent loads in flight before the stores). */
  readonly unroll: number;
  /** Consecutive y (rows of the output's (x, d) planes) per block: more work per block for small planes. */
  readonly rows: number;
}

/**
 * Promised ranges of the kernel symbols (checked by dispatch, and by `pack` for the parameters).
 * They bound every emitted integer: the (x, d / V) merge stays below 2^31 so its runtime divisions
 * use magic numbers, and offsets (up to b · x · y · d) are emitted in 64 bits.
 */
export const HEAD_PERMUTE_DOMAINS = Object.freeze({
  /** grid.z */
  batch: 4096,
  /** the dim read first (h for bhsd2bshd, s for bshd2bhsd) */
  x: 1 << 20,
  /** the dim written first; grid.x = y / rows */
  y: 1 << 20,
  /** elements of the contiguous last dim */
  d: 1024,
  /** tiles of the (x, d / V) plane: grid.y */
  tiles: 65535,
});

/** The kernel's parameters, in order. */
export function headPermuteParams(policy: HeadPermutePolicy, target: Target = sm90a) {
  const element = target.dtypeType(policy.dtype);
  const vectorElements = policy.vectorBytes / getDType(policy.dtype).bytes;
  return {
    src: kernelParam.pointer(element, { const: true, align: policy.vectorBytes }),
    dst: kernelParam.pointer(element, { align: policy.vectorBytes }),
    xdim: kernelParam.i32({ range: [1, HEAD_PERMUTE_DOMAINS.x] }),
    ydim: kernelParam.i32({ range: [1, HEAD_PERMUTE_DOMAINS.y] }),
    dvec: kernelParam.i32({ range: [1, HEAD_PERMUTE_DOMAINS.d / vectorElements] }),
  };
}

/** The kernel's signature: {@link headPermuteParams} under `name`. */
export function headPermuteSignature(name: string, policy: HeadPermutePolicy, target: Target = sm90a) {
  return new KernelSignature(name, target, headPermuteParams(policy, target));
}

/** The symbols of the layouts, with their domains. */
function symbols(vectorElements: number) {
  return {
    B: symbol('B', { max: HEAD_PERMUTE_DOMAINS.batch }),
    X: symbol('xdim', { max: HEAD_PERMUTE_DOMAINS.x }),
    Y: symbol('ydim', { max: HEAD_PERMUTE_DOMAINS.y }),
    DV: symbol('dvec', { max: HEAD_PERMUTE_DOMAINS.d / vectorElements }),
  };
}

/**
 * The work view of a tensor over the logical index (b, x, y, d): d splits into (d / V, v), then
 * (x, d / V) merges into i; y is padded to a whole number of row blocks and i to a whole number
 * of tiles (so the layout's validity is the tail guard). Top dims (b, y, i, v).
 */
export function headPermuteWorkView(desc: TensorDescriptor, vectorElements: number, tile: number, rows = 1): TensorDescriptor {
  const { B, X, Y, DV } = symbols(vectorElements);
  const split = transformTensorDescriptor(
    desc,
    [passThrough(B), passThrough(X), passThrough(Y), unmerge([DV, vectorElements])],
    [[0], [1], [2], [3]],
    [[0], [1], [2], [3, 4]],
  );
  const work = transformTensorDescriptor(
    split,
    [passThrough(B), passThrough(Y), merge([X, DV]), passThrough(vectorElements)],
    [[0], [2], [1, 3], [4]],
    [[0], [1], [2], [3]],
  );
  return padTensorDescriptor(work, [1, rows, tile, 1], [false, rows > 1, true, false]);
}

/** Source (packed b, x, y, d) and destination (packed b, y, x, d) descriptors over the logical (b, x, y, d). */
export function headPermuteDescriptors(vectorElements: number): { readonly src: TensorDescriptor; readonly dst: TensorDescriptor } {
  const { B, X, Y, DV } = symbols(vectorElements);
  const D = sym.mul(DV, vectorElements);
  return {
    src: makeNaiveTensorDescriptorPacked([B, X, Y, D]),
    dst: makeNaiveTensorDescriptor([B, X, Y, D], [sym.mul(Y, X, D), D, sym.mul(X, D), 1]),
  };
}

/** Emits the kernel `name` with `policy` into `src` (CUDA, sm_90a by default), entry declared by `signature`. */
export function emitHeadPermuteKernel(
  src: SourceBuilder,
  name: string,
  policy: HeadPermutePolicy,
  target: Target = sm90a,
  signature: ReturnType<typeof headPermuteSignature> = headPermuteSignature(name, policy, target),
): void {
  const vectorElements = policy.vectorBytes / getDType(policy.dtype).bytes;
  const tile = policy.threads * policy.unroll;
  const descriptors = headPermuteDescriptors(vectorElements);
  const rows = policy.rows;
  const srcView = headPermuteWorkView(descriptors.src, vectorElements, tile, rows);
  const dstView = headPermuteWorkView(descriptors.dst, vectorElements, tile, rows);
  signature.defineEntry(src, { launchBounds: { maxThreads: policy.threads } }, (b, p) => {
    const emitter = new IndexEmitter(b, { symbols: { xdim: p.xdim, ydim: p.ydim, dvec: p.dvec } });
    const batch = b.let('batch', int32, cast(target.blockIdx('z'), int32), { range: [0, HEAD_PERMUTE_DOMAINS.batch - 1] });
    const y0 = b.let('y0', int32, mul(cast(target.blockIdx('x'), int32), rows), { range: [0, HEAD_PERMUTE_DOMAINS.y - 1] });
    const tid = b.let('tid', int32, cast(target.threadIdx('x'), int32), { range: [0, policy.threads - 1] });
    const tileBase = b.let('tile_base', int32, mul(cast(target.blockIdx('y'), int32), tile), {
      range: [0, (HEAD_PERMUTE_DOMAINS.tiles - 1) * tile],
    });
    const moves = Array.from({ length: policy.unroll }, (_, u) => {
      b.comment(`vector ${u} of this thread in each row: work index i = tile_base + ${u * policy.threads} + tid`);
      const i = b.let('i', int32, add(tileBase, add(tid, u * policy.threads)));
      return Array.from({ length: rows }, (_, r) => {
        const y = r === 0 ? y0 : add(y0, r);
        const from = emitCalculateOffset(b, srcView, [batch, y, i, 0], emitter);
        const to = emitCalculateOffset(b, dstView, [batch, y, i, 0], emitter);
        return { from, to };
      });
    }).flat();
    const values = moves.map(({ from }) => {
      const v = b.var('v', vectorType(policy.vectorBytes));
      b.if(from.valid, (t) => t.assign(v, loadVector(p.src, from.offset, policy.vectorBytes)));
      return v;
    });
    moves.forEach(({ from, to }, u) => {
      b.if(from.valid, (t) => t.assign(vectorLvalue(p.dst, to.offset, policy.vectorBytes), values[u]!));
    });
  });
}

/** One translation unit holding the kernel (what the compilers get). */
export function headPermuteSource(name: string, policy: HeadPermutePolicy, target: Target = sm90a): string {
  const src = new SourceBuilder({
    dialect: target,
    header: [`tilekit permute: ${name}`, 'generated by @tilekit/kernel-permute; do not edit'],
  });
  emitHeadPermuteKernel(src, name, policy, target);
  return src.render();
}
