import {
  add,
  bitAnd,
  bitXor,
  cast,
  div,
  eq,
  float32,
  gt,
  index,
  int32,
  mbarrierArrive,
  mbarrierInit,
  mbarrierWaitParity,
  mul,
  pointer,
  uint32,
  uint64,
  type BlockBuilder,
  type Expr,
} from '@tilekit/codegen';
import { BlockGemmPolicyError } from '@tilekit/gemm';
import { makeDistributedTensor, type DistributedTensor, type ThreadScope } from '@tilekit/tile';
import type { FmhaFwdKeyPart } from './fmhaFwdKeyPart.ts';
import { checkOutputSlices, type FmhaFwdOutputSplit } from './fmhaFwdOutputSplit.ts';
import type { FmhaFwdWsContext } from './fmhaFwdWsContext.ts';
import type { FmhaFwdWsPipeline, FmhaFwdWsPolicy } from './fmhaFwdWsPipeline.ts';
import type { FmhaFwdWsTileSteps } from './fmhaFwdWsTileSteps.ts';

/** Rows of the score tile a thread holds (wgmma's m64 accumulator: rows r and r + 8 of its warp's 16). */
const ROWS = 2;
/** The exchange's four mbarriers (full and empty of two buffers), before the buffers. */
const BARRIER_BYTES = 32;

/**
 * O split into two column halves, where group 0 (the scoring warpgroup) computes S = Q·Kᵀ and the
 * softmax and hands each tile's packed P and O rescale factors to group 1 through shared memory
 * (FFPA's Hopper design; FlashMLA's O split). Thread t of group 1 holds the rows thread t of group 0
 * holds, so the exchange is per thread: its P fragment words and its rows' factors, in two buffers
 * on full/empty mbarriers that every thread arrives on itself (its own stores precede its release).
 * Q·Kᵀ runs once per tile; group 1 only multiplies P by its half of V. At the end group 0 hands over
 * its partial row sums l, so group 1 normalises its half of O alike. tileM 64; group 0 runs the
 * policy's sequential or softmax-overlapped schedule.
 */
export class FmhaFwdSharePOutputSplit implements FmhaFwdOutputSplit {
  readonly tag = 'shareP';
  readonly slices = 2;
  readonly scoringSlices = 1;
  readonly key: FmhaFwdKeyPart = Object.freeze({
    config: { dvSlices: 2, pExchange: 'smem' },
    tags: { dvSlices: 'dvslices', pExchange: 'p' },
  });

  constructor() {
    Object.freeze(this);
  }

  check(policy: FmhaFwdWsPolicy): void {
    checkOutputSlices(policy, this.slices);
    const bad = (rule: string, found: unknown): never => {
      throw new BlockGemmPolicyError('FmhaFwdWsPipeline outputSplit', rule, String(found));
    };
    if (policy.tileM !== 64) bad('shares P between two warpgroups of the same 64 rows: tileM 64', policy.tileM);
    if (policy.schedule?.tag === 'pingPong') bad('hands P over in the sequential or softmax-overlapped schedule', policy.schedule.tag);
  }

  /** 32-bit words per thread and buffer: the P fragment and the rows' rescale factors. */
  #words(p: FmhaFwdWsPipeline): number {
    return p.pv.aRegisters + ROWS;
  }

  sharedBytes(p: FmhaFwdWsPipeline): number {
    return BARRIER_BYTES + 2 * this.#words(p) * p.rowThreads * 4;
  }

  #bar(ctx: Pick<FmhaFwdWsContext, 'smem' | 'pipeline'>, i: Expr | number): Expr {
    return add(cast(add(ctx.smem, ctx.pipeline.outputSplitOffset), pointer(uint64)), i);
  }

  #full = (ctx: Pick<FmhaFwdWsContext, 'smem' | 'pipeline'>, buf: Expr): Expr => this.#bar(ctx, buf);
  #empty = (ctx: Pick<FmhaFwdWsContext, 'smem' | 'pipeline'>, buf: Expr): Expr => this.#bar(ctx, add(buf, 2));

  /** Word `k` of thread `tid`'s slot in buffer `buf` (an lvalue of `type`). */
  #slot(ctx: FmhaFwdWsContext, buf: Expr, k: number, tid: Expr, type: typeof uint32 | typeof float32): Expr {
    const p = ctx.pipeline;
    const base = cast(add(ctx.smem, p.outputSplitOffset + BARRIER_BYTES), pointer(type));
    return index(base, add(mul(buf, this.#words(p) * p.rowThreads), add(k * p.rowThreads, tid)));
  }

  emitInit(t: BlockBuilder, ctx: Pick<FmhaFwdWsContext, 'target' | 'smem' | 'pipeline'>): void {
    for (let i = 0; i < 4; i++) t.expr(mbarrierInit(ctx.target, this.#bar(ctx, i), ctx.pipeline.rowThreads));
  }

  emitConsumers(cons: BlockBuilder, steps: FmhaFwdWsTileSteps, runSchedule: (b: BlockBuilder) => void): void {
    cons.if(
      eq(steps.state.slice!, 0),
      (scorer) => runSchedule(scorer),
      (follower) => this.#emitFollower(follower, steps),
    );
  }

  /** Buffer and parity of exchange round `round` (locals). */
  #round(l: BlockBuilder, round: Expr): { buf: Expr; parity: Expr } {
    return { buf: l.let('px_buf', int32, bitAnd(round, 1)), parity: l.let('px_parity', uint32, cast(bitAnd(div(round, 2), 1), uint32)) };
  }

  emitPublish(l: BlockBuilder, steps: FmhaFwdWsTileSteps, it: Expr, corr: DistributedTensor): void {
    const { ctx } = steps;
    const { pFrag } = steps.state;
    l.comment("P exchange: this tile's P and O rescale factors for group 1");
    const { buf, parity } = this.#round(l, it);
    l.expr(mbarrierWaitParity(ctx.target, this.#empty(ctx, buf), bitXor(parity, 1)));
    steps.threadsOf(l).threads((t) => {
      for (let k = 0; k < pFrag.length; k++) t.b.assign(this.#slot(ctx, buf, k, t.tid, uint32), pFrag.at(t, k));
      for (let r = 0; r < ROWS; r++) t.b.assign(this.#slot(ctx, buf, pFrag.length + r, t.tid, float32), corr.at(t, r));
    });
    l.expr(mbarrierArrive(ctx.target, this.#full(ctx, buf)));
  }

  /** Group 1's key loop: take P and the factors, release the buffer, rescale O, P·V on its half of V. */
  #emitFollower(fo: BlockBuilder, steps: FmhaFwdWsTileSteps): void {
    const { ctx } = steps;
    const { pFrag, softmax, oAcc, block } = steps.state;
    if (softmax.m.size !== ROWS)
      throw new BlockGemmPolicyError('FmhaFwdSharePOutputSplit', `a thread must hold ${ROWS} rows`, String(softmax.m.size));
    fo.comment('group 1: P·V on its half of V, with P and the rescale factors from group 0');
    const corrIn = makeDistributedTensor(block, 'corr_in', softmax.rowEncoding, float32);
    fo.forRange({ name: 'it', to: ctx.iters }, (l, it) => {
      const { s, parity } = ctx.ring.stageOf(l, it);
      const vAddr = steps.vTile(l, s);
      const round = this.#round(l, it);
      l.expr(mbarrierWaitParity(ctx.target, this.#full(ctx, round.buf), round.parity));
      steps.threadsOf(l).threads((t) => this.#take(t, ctx, round.buf, pFrag, corrIn));
      l.expr(mbarrierArrive(ctx.target, this.#empty(ctx, round.buf)));
      steps.threadsOf(l).threads((t) => t.b.if(gt(it, 0), (r) => softmax.emitRescale({ ...t, b: r }, oAcc, corrIn)));
      steps.issuePv(l, vAddr, s, parity, steps.pvAccumulate(it, 0), undefined, true);
      steps.releaseV(l, s);
    });
  }

  #take(t: ThreadScope, ctx: FmhaFwdWsContext, buf: Expr, pFrag: FmhaFwdWsTileSteps['state']['pFrag'], corrIn: DistributedTensor): void {
    for (let k = 0; k < pFrag.length; k++) t.b.assign(pFrag.at(t, k), this.#slot(ctx, buf, k, t.tid, uint32));
    for (let r = 0; r < ROWS; r++) t.b.assign(corrIn.at(t, r), this.#slot(ctx, buf, pFrag.length + r, t.tid, float32));
  }

  /** Group 0 hands its thread-partial row sums l to group 1 (the round after the last tile). */
  emitBeforeEpilogue(cons: BlockBuilder, steps: FmhaFwdWsTileSteps): void {
    const { ctx } = steps;
    const { softmax } = steps.state;
    cons.comment("P exchange: group 0's row sums l for group 1's normalisation");
    const { buf, parity } = this.#round(cons, ctx.iters);
    const at = (t: ThreadScope, r: number): Expr => this.#slot(ctx, buf, steps.ctx.pipeline.pv.aRegisters + r, t.tid, float32);
    cons.if(
      eq(steps.state.slice!, 0),
      (sc) => {
        sc.expr(mbarrierWaitParity(ctx.target, this.#empty(ctx, buf), bitXor(parity, 1)));
        steps.threadsOf(sc).threads((t) => {
          for (let r = 0; r < ROWS; r++) t.b.assign(at(t, r), softmax.l.at(t, r));
        });
        sc.expr(mbarrierArrive(ctx.target, this.#full(ctx, buf)));
      },
      (fo) => {
        fo.expr(mbarrierWaitParity(ctx.target, this.#full(ctx, buf), parity));
        steps.threadsOf(fo).threads((t) => {
          for (let r = 0; r < ROWS; r++) t.b.assign(softmax.l.at(t, r), at(t, r));
        });
      },
    );
  }
}
