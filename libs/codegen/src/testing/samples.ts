import { float32, int32, int64, opaque, pointer, uint64 } from '../cType.ts';
import type { Expr } from '../expr.ts';
import { callFunction } from '../function.ts';
import type { FunctionDef } from '../function.ts';
import { add, bitAnd, bitXor, call, cast, div, eq, index, lit, lt, mod, mul, select, shl, shr, sub, verbatim } from '../ops.ts';
import { include } from '../requirement.ts';
import { SourceBuilder } from '../sourceBuilder.ts';
import { host } from '../hostTarget.ts';
import type { Target } from '../target.ts';

/**
 * A small host program (golden-tested and run by the host compile test): an XOR swizzle in a
 * namespace, a constexpr global, and a `main` that sums `tk::swizzle(r, c)` over r < 4 and c in
 * 0, 8, ..., 56 and prints the total. `swizzleReference` is the same function in TS.
 */
export function hostSwizzleSource(): string {
  const src = new SourceBuilder({ dialect: host, header: 'tilekit codegen sample: host index math' });
  const rowLength = src.global('kRowLength', int32, 64, { storage: 'constexpr' });
  let swizzle: FunctionDef | undefined;
  src.namespace('tk', (ns) => {
    swizzle = ns.function(
      {
        name: 'swizzle',
        returns: int32,
        params: { row: { type: int32, range: [0, 127] }, col: { type: int32, range: [0, 63] } },
        qualifiers: host.functionQualifiers('force'),
      },
      (b, { row, col }) => {
        b.comment('XOR the 8-element chunk index with the row (an LDS-style swizzle)');
        const chunk = b.let('chunk', int32, div(col, 8));
        const within = b.let('within', int32, mod(col, 8));
        const sw = b.let('sw', int32, bitXor(chunk, bitAnd(row, 7)));
        b.return(add(add(mul(row, rowLength), mul(sw, 8)), within));
      },
    );
  });
  const fn = swizzle as FunctionDef;
  src.function({ name: 'main', returns: int32 }, (b) => {
    const total = b.var('total', int32, 0);
    b.forRange({ name: 'r', to: 4 }, (l, r) => {
      l.forRange({ name: 'c', to: 64, step: 8, unroll: 2 }, (m, c) => m.assign(total, callFunction(fn, [r, c]), '+='));
    });
    const format = verbatim('"%d\\n"', pointer(opaque('char'), { const: true }));
    b.expr(call('std::printf', [format, total], int32, { requires: [include('<cstdio>')] }));
    b.return(sub(total, total));
  });
  return src.render();
}

/** `tk::swizzle` of `hostSwizzleSource`, in TS. */
export function swizzleReference(row: number, col: number): number {
  return row * 64 + (Math.trunc(col / 8) ^ (row & 7)) * 8 + (col % 8);
}

/**
 * Kernels written once against the `Target` interface, as a reference of what target-generic code
 * looks like (golden-tested, and compiled by the nvcc / clang tests):
 * - `tk_block_sum`: a block sum of an fp16 array with a warp butterfly (`shflXor` in an unrolled
 *   loop inside a force-inlined helper), shared memory, a barrier, the lane id and a ballot;
 * - `tk_spellings`: every other dialect spelling once (3-D indices, all shuffles, 64-bit shuffles,
 *   votes, the warp size).
 */
export function sampleKernelsSource(target: Target, blockSize = 256): string {
  const warp = target.warpSize;
  if (warp === null) throw new Error(`sampleKernelsSource: ${target.name} has no warps`);
  const warps = blockSize / warp;
  const src = new SourceBuilder({
    dialect: target,
    header: [`tilekit codegen sample kernels for ${target.name}`, 'generated; do not edit'],
  });
  const warpSum = src.function(
    { name: 'tk_warp_sum', returns: float32, params: { v: float32 }, qualifiers: target.functionQualifiers('force') },
    (b, { v }) => {
      const acc = b.var('acc', float32, v);
      b.forRange({ name: 'k', to: Math.log2(warp), unroll: true }, (l, k) => {
        l.assign(acc, target.shflXor(acc, shl(1, k)), '+=');
      });
      b.return(acc);
    },
  );
  const half = target.dtypeType('fp16');
  src.function(
    {
      name: 'tk_block_sum',
      qualifiers: target.kernelQualifiers(),
      attributes: [target.launchBounds(blockSize)],
      params: {
        in: pointer(half, { const: true, restrict: true }),
        out: pointer(float32, { restrict: true }),
        ballots: pointer(uint64, { restrict: true }),
        n: int32,
      },
    },
    (b, { in: input, out, ballots, n }) => {
      b.comment(`${warps} warps of ${warp} lanes; one partial sum per warp in shared memory`);
      const partial = target.declareShared(b, 'partial', float32, warps, { align: 16 });
      const tid = b.let('tid', int32, cast(target.threadIdx('x'), int32));
      const i = b.let('i', int32, add(mul(cast(target.blockIdx('x'), int32), blockSize), tid));
      const v = b.let('v', float32, select(lt(i, n), cast(index(input, i), float32), lit(0, float32)));
      const sum = b.let('sum', float32, callFunction(warpSum, [v]));
      const lane = b.let('lane', int32, cast(target.laneId(), int32));
      const w = b.let('warp', int32, shr(tid, Math.log2(warp)));
      const vote = b.let('vote', target.laneMaskType, target.ballot(lt(i, n)));
      b.if(eq(lane, 0), (t) => {
        t.assign(index(partial, w), sum);
        t.assign(index(ballots, add(mul(cast(target.blockIdx('x'), int32), warps), w)), vote);
      });
      b.push(target.syncThreads());
      b.if(
        eq(tid, 0),
        (t) => {
          const total = t.var('total', float32, 0);
          t.forRange({ name: 'j', to: warps, unroll: true }, (l, j) => l.assign(total, index(partial, j), '+='));
          t.assign(index(out, target.blockIdx('x')), total);
        },
        (e) => e.comment('other threads are done'),
      );
      b.if(lt(sub(n, 1), 0), (t) => t.return());
    },
  );
  src.function(
    {
      name: 'tk_spellings',
      qualifiers: target.kernelQualifiers(),
      params: {
        out: pointer(int32, { restrict: true }),
        f: pointer(float32, { restrict: true }),
        wide: pointer(int64, { restrict: true }),
      },
    },
    (b, { out, f, wide }) => {
      const idx = (d: 'x' | 'y' | 'z'): Expr => cast(target.threadIdx(d), int32);
      const dim = (d: 'x' | 'y' | 'z'): Expr => cast(target.blockDim(d), int32);
      const t = b.let('t', int32, add(add(idx('x'), mul(idx('y'), dim('x'))), mul(mul(idx('z'), dim('x')), dim('y'))));
      const blk = b.let(
        'blk',
        int32,
        add(cast(target.blockIdx('y'), int32), mul(cast(target.blockIdx('z'), int32), cast(target.gridDim('y'), int32))),
      );
      const lane = b.let('lane', int32, cast(target.laneId(), int32));
      const v = b.var('v', float32, index(f, t));
      b.assign(v, add(target.shfl(v, 0), target.shflDown(v, 1)));
      b.assign(v, target.shflUp(v, 1, { width: 16 }), '+=');
      const iv = b.let('iv', int32, target.shfl(t, bitXor(lane, 1), { width: target.warpSize ?? 1 }));
      const wv = b.let('wv', int64, target.shflXor(index(wide, t), 2));
      b.assign(index(wide, t), add(wv, cast(target.gridDim('x'), int64)));
      const votes = b.let('votes', int32, add(cast(target.any(lt(v, 0)), int32), cast(target.all(eq(iv, t)), int32)));
      b.assign(index(out, t), add(add(votes, mul(blk, target.warpSizeExpr())), cast(v, int32)));
    },
  );
  return src.render();
}
