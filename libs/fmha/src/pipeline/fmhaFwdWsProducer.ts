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
  const { pipeline: p, target, args, tid, smem, ring } = ctx;
  prod.comment(`producer warpgroup: registers down to ${p.policy.producerRegisters}; one thread issues every TMA load`);
  prod.expr(setMaxNReg(target, 'dec', p.policy.producerRegisters));
  prod.if(eq(tid, p.consumerThreads), (one) => {
    for (const map of [args.qMap, args.kMap, args.vMap]) one.expr(prefetchTensorMap(target, map));
    one.expr(mbarrierArriveExpectTx(target, ring.qFull, p.qBytes));
    for (let c = 0; c < p.slabsQK; c++) {
      one.expr(
        tmaLoad(target, { dst: add(smem, c * p.qk.aTileBytes), map: args.qMap, bar: ring.qFull, coords: args.qCoords(c * SLAB, args.m0) }),
      );
    }
    const cursor = ctx.walk.emitCursor(one, ctx.walkCtx);
    one.forRange({ name: 'it', to: ctx.iters }, (l, it) => {
      const { s, parity } = ring.stageOf(l, it);
      const row = cursor.row(l, it, 'k_row');
      emitLoadK(l, ctx, s, parity, row);
      emitLoadV(l, ctx, s, parity, row);
    });
  });
}

/** Waits K stage `s` empty, arms its full barrier and loads the key tile from `row`, slab by slab. */
function emitLoadK(l: BlockBuilder, ctx: FmhaFwdWsContext, s: Expr, parity: Expr, row: Expr): void {
  const { pipeline: p, target, args, ring } = ctx;
  l.expr(mbarrierWaitParity(target, ring.kEmpty(s), bitXor(parity, 1)));
  l.expr(mbarrierArriveExpectTx(target, ring.kFull(s), p.kStageBytes));
  const kStage = l.let('k_stage', pointer(uint8), add(ctx.smem, add(p.kOffset, mul(s, p.kStageBytes))));
  for (let c = 0; c < p.slabsQK; c++)
    l.expr(
      tmaLoad(target, { dst: add(kStage, c * p.qk.bTileBytes), map: args.kMap, bar: ring.kFull(s), coords: args.kCoords(c * SLAB, row) }),
    );
}

/** The same for V stage `s` (slabs of tileN rows of 128 bytes). */
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
