import {
  add,
  bitXor,
  eq,
  mbarrierArriveExpectTx,
  mbarrierWaitParity,
  mul,
  pointer,
  prefetchTensorMap,
  setMaxNReg,
  tmaLoad,
  uint8,
  type BlockBuilder,
  type Expr,
} from '@tilekit/codegen';
import type { FmhaFwdWsContext } from './fmhaFwdWsContext.ts';

const SLAB = 64;

/** The producer warpgroup: registers down, then one thread issues every TMA load (Q once, K and V per key tile). */
export function emitFmhaFwdWsProducer(prod: BlockBuilder, ctx: FmhaFwdWsContext): void {
  const { pipeline: p, target, args, tid, ring } = ctx;
  prod.comment(`producer warpgroup: registers down to ${p.policy.producerRegisters}; one thread issues every TMA load`);
  prod.expr(setMaxNReg(target, 'dec', p.policy.producerRegisters));
  prod.if(eq(tid, p.consumerThreads), (one) => {
    for (const map of [args.qMap, args.kMap, args.vMap]) one.expr(prefetchTensorMap(target, map));
    p.qkSource.emitLoadQ(one, ctx);
    const cursor = ctx.walk.emitCursor(one, ctx.walkCtx);
    one.forRange({ name: 'it', to: ctx.iters }, (l, it) => {
      const { s, parity } = ring.stageOf(l, it);
      const row = cursor.row(l, it, 'k_row');
      p.qkSource.emitLoadK(l, ctx, { it, s }, parity, row);
      emitLoadV(l, ctx, s, parity, row);
    });
  });
}

/** Waits V stage `s` empty, arms its full barrier and loads the key tile's V from `row`, in slabs of tileN rows of 128 bytes. */
function emitLoadV(l: BlockBuilder, ctx: FmhaFwdWsContext, s: Expr, parity: Expr, row: Expr): void {
  const { pipeline: p, target, args, ring } = ctx;
  l.expr(mbarrierWaitParity(target, ring.vEmpty(s), bitXor(parity, 1)));
  l.expr(mbarrierArriveExpectTx(target, ring.vFull(s), p.vStageBytes));
  const vStage = l.let('v_stage', pointer(uint8), add(ctx.smem, add(p.vOffset, mul(s, p.vStageBytes))));
  for (let c = 0; c < p.slabsV; c++)
    l.expr(
      tmaLoad(target, {
        dst: add(vStage, c * p.policy.tileN * 128),
        map: args.vMap,
        bar: ring.vFull(s),
        coords: args.vCoords(c * SLAB, row),
      }),
    );
}
