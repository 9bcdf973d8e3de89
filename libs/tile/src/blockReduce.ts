import { add, bitXor, cast, div, eq, index, int32, lit, maxOf, minOf, mod, mul, select, sub, uint32, type Expr } from '@tilekit/codegen';
import { makeDistributedTensor, type DistributedTensor, type ThreadBuffers } from './distributedTensor.ts';
import { TileEmitError } from './errors.ts';
import { reduceEncoding, type ReducedEncoding } from './reduceEncoding.ts';
import { joinMixedRadix, splitMixedRadix, type TileDistributionEncoding } from './tileDistributionEncoding.ts';
import type { BlockEmitter } from './blockEmitter.ts';

/** An associative, commutative combiner, in emitted code and in TS. */
export interface ReduceOp {
  readonly name: string;
  combine(a: Expr, b: Expr): Expr;
  evaluate(a: number, b: number): number;
}

/** Sum. */
export const reduceSum: ReduceOp = { name: 'sum', combine: (a, b) => add(a, b), evaluate: (a, b) => a + b };
/** Maximum. */
export const reduceMax: ReduceOp = { name: 'max', combine: (a, b) => maxOf(a, b), evaluate: (a, b) => Math.max(a, b) };
/** Minimum. */
export const reduceMin: ReduceOp = { name: 'min', combine: (a, b) => minOf(a, b), evaluate: (a, b) => Math.min(a, b) };

/** How one replicated digit created by the reduction is combined across threads. */
export interface CrossThreadStep {
  /** Flat-thread-id stride between replicas and their count. */
  readonly stride: number;
  readonly length: number;
  /** `lanes`: xor butterfly of warp shuffles; `shared`: through shared memory (across warps or non-power-of-two). */
  readonly via: 'lanes' | 'shared';
}

/** The shuffle participation mask of the calling thread's warp: every lane the block has there. */
function activeLanes(block: BlockEmitter, tid: Expr): Expr {
  const w = block.warpSize;
  const full = lit(2 ** w - 1, uint32);
  const rest = block.numThreads % w;
  if (rest === 0) return full;
  const partial = lit(2 ** rest - 1, uint32);
  return block.numThreads < w ? partial : select(eq(div(tid, w), Math.floor(block.numThreads / w)), partial, full);
}

const isPow2 = (n: number): boolean => n > 0 && (n & (n - 1)) === 0;

/**
 * The plan of a block reduction over `reduceXs`: the reduced encoding (CK's
 * `make_reduce_tile_distribution_encoding`) and, per P-owned digit of a reduced X (now an R digit),
 * how its replicas are combined. A digit whose replicas are power-of-two strided threads inside one
 * warp goes through lane shuffles (an xor butterfly: every replica ends with the full result, so the
 * broadcast is free); any other (across warps, or non-power-of-two) through shared memory.
 */
export function blockReducePlan(
  encoding: TileDistributionEncoding,
  reduceXs: readonly number[],
  warpSize: number,
): { readonly reduced: ReducedEncoding; readonly steps: readonly CrossThreadStep[] } {
  const reduced = reduceEncoding(encoding, reduceXs);
  const out = reduced.encoding;
  const steps: CrossThreadStep[] = [];
  for (const nr of reduced.newRs) {
    if (nr.length === 1) continue;
    const place = out.rDigitPlacement(nr.r)!;
    const stride = place.stride * out.pLengths.slice(place.p + 1).reduce((a, b) => a * b, 1);
    const span = stride * nr.length;
    const lanes = isPow2(stride) && isPow2(nr.length) && span <= warpSize && warpSize % span === 0;
    steps.push({ stride, length: nr.length, via: lanes ? 'lanes' : 'shared' });
  }
  return { reduced, steps };
}

/**
 * A block reduction of `input` over the X dims `reduceXs` with `op` (CK's `block_tile_reduce` +
 * `block_tile_reduce_sync` with broadcast, plus the cross-warp part of `block_reduce2d`): in each
 * thread, the registers sharing kept Ys are combined; then, per reduced digit held by threads (see
 * {@link blockReducePlan}), across lanes by shuffles or across warps through shared memory. Returns
 * the result tile (distribution: the reduced encoding), on which every replica holds the full
 * result. Block level: emits its own `threads` regions and barriers. Postcondition (host dialect,
 * g++, against {@link evaluateBlockReduce}): exact for exactly-representable data.
 */
export function blockTileReduce(
  block: BlockEmitter,
  name: string,
  input: DistributedTensor,
  reduceXs: readonly number[],
  op: ReduceOp,
): DistributedTensor {
  const { reduced, steps } = blockReducePlan(input.encoding, reduceXs, block.warpSize);
  const inEnc = input.encoding;
  const out = makeDistributedTensor(block, name, reduced.encoding, input.type);
  const redLens = reduced.reducedYs.map((y) => inEnc.yLengths[y]!);
  const redCount = redLens.reduce((a, b) => a * b, 1);
  block.threads((t) => {
    for (let d = 0; d < out.size; d++) {
      const kept = out.encoding.calculateYIndex(d);
      const ys = new Array<number>(inEnc.ndimY).fill(0);
      reduced.keptYs.forEach((y, j) => (ys[y] = kept[j]!));
      for (let k = 0; k < redCount; k++) {
        splitMixedRadix(k, redLens).forEach((v, j) => (ys[reduced.reducedYs[j]!] = v));
        const v = cast(input.at(t, inEnc.calculateD(ys)), out.type);
        t.b.assign(out.at(t, d), k === 0 ? v : op.combine(out.at(t, d), v));
      }
    }
  });
  const n = out.size;
  let scratch: ReturnType<BlockEmitter['registers']> | undefined;
  let smem: Expr | undefined;
  for (const step of steps) {
    if (step.via === 'lanes') {
      for (let mask = step.stride; mask < step.stride * step.length; mask *= 2) {
        if (block.dialect === 'cuda') {
          block.threads((t) => {
            const lanes = t.b.let('lanes', uint32, activeLanes(block, t.tid));
            for (let d = 0; d < n; d++) {
              // A shuffle is a call (impure): name its result so combiners may read it twice.
              const other = t.b.let('other', out.type, block.target.shflXor(out.at(t, d), mask, { mask: lanes }));
              t.b.assign(out.at(t, d), op.combine(out.at(t, d), other));
            }
          });
        } else {
          // Host: a shuffle is a store of every lane's value, then a read of the partner's.
          scratch ??= block.registers(`${name}_xchg`, out.type, n);
          const x = scratch;
          block.threads((t) => {
            for (let d = 0; d < n; d++) t.b.assign(x.at(t, d), out.at(t, d));
          });
          block.threads((t) => {
            for (let d = 0; d < n; d++) t.b.assign(out.at(t, d), op.combine(out.at(t, d), x.ofThread(bitXor(t.tid, mask), d)));
          });
        }
      }
      continue;
    }
    smem ??= block.shared(`${name}_smem`, out.type, block.numThreads * n);
    const s = smem;
    block.threads((t) => {
      for (let d = 0; d < n; d++) t.b.assign(index(s, add(mul(t.tid, n), d)), out.at(t, d));
    });
    block.sync();
    block.threads((t) => {
      // Every replica combines the same values in the same order (r = 0 … L−1): identical results.
      const r = t.b.let('r', int32, mod(div(t.tid, step.stride), step.length));
      const first = t.b.let('first', int32, sub(t.tid, mul(r, step.stride)));
      for (let d = 0; d < n; d++) {
        for (let k = 0; k < step.length; k++) {
          const v = index(s, add(mul(add(first, k * step.stride), n), d));
          t.b.assign(out.at(t, d), k === 0 ? v : op.combine(out.at(t, d), v));
        }
      }
    });
    block.sync();
  }
  return out;
}

/**
 * Reference of {@link blockTileReduce} from the tile's meaning: every output register of every
 * thread is `op` folded (in X order) over the input tile elements whose kept X coordinates are its
 * own. The input tile is read from `buffers` (each element from its first owner).
 */
export function evaluateBlockReduce(
  encoding: TileDistributionEncoding,
  reduceXs: readonly number[],
  buffers: ThreadBuffers,
  op: ReduceOp,
): ThreadBuffers {
  const reduced = reduceEncoding(encoding, reduceXs);
  if (reduced.keptXs.length + reduceXs.length !== encoding.ndimX)
    throw new TileEmitError('evaluateBlockReduce', 'bad reduceXs', `[${reduceXs.join(', ')}]`);
  const acc = new Map<string, number>();
  const total = encoding.xLengths.reduce((a, b) => a * b, 1);
  for (let flat = 0; flat < total; flat++) {
    const x = splitMixedRadix(flat, encoding.xLengths);
    const o = encoding.owners(x)[0]!;
    const v = buffers[joinMixedRadix(o.ps, encoding.pLengths)]![o.d]!;
    const key = reduced.keptXs.map((k) => x[k]).join(',');
    const prev = acc.get(key);
    acc.set(key, prev === undefined ? v : op.evaluate(prev, v));
  }
  const out = reduced.encoding;
  return Array.from({ length: out.numThreads }, (_, th) => {
    const ps = out.partitionIndexOf(th);
    return Array.from({ length: out.threadBufferSize }, (_, d) => acc.get(out.calculateXIndexFromD(ps, d).join(','))!);
  });
}
