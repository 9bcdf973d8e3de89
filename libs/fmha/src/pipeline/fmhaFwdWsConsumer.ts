import { add, div, float32, int32, mul, setMaxNReg, sub, uint32, type BlockBuilder, type Expr } from '@tilekit/codegen';
import { BlockEmitter, makeDistributedTensor } from '@tilekit/tile';
import { BlockOnlineSoftmax } from '../softmax/blockOnlineSoftmax.ts';
import type { FmhaFwdWsContext } from './fmhaFwdWsContext.ts';
import { FMHA_FWD_SEQUENTIAL_SCHEDULE } from './fmhaFwdConsumerSchedule.ts';
import { FmhaFwdWsTileSteps, type FmhaFwdWsConsumerState } from './fmhaFwdWsTileSteps.ts';

/**
 * The consumer warpgroups: registers up, S/O/P registers and the softmax state, Q awaited, then
 * the key loop of the policy's schedule (`FmhaFwdConsumerSchedule`) and the epilogue.
 */
export function emitFmhaFwdWsConsumer(cons: BlockBuilder, ctx: FmhaFwdWsContext): void {
  const { pipeline: p, target } = ctx;
  cons.comment(`${p.qk.warpgroups} consumer warpgroup(s) of 64 query rows: registers up to ${p.policy.consumerRegisters}`);
  cons.expr(setMaxNReg(target, 'inc', p.policy.consumerRegisters));
  const steps = new FmhaFwdWsTileSteps(ctx, declareConsumerState(cons, ctx));
  const runSchedule = (b: BlockBuilder): void => (p.policy.schedule ?? FMHA_FWD_SEQUENTIAL_SCHEDULE).emit(b, steps);
  if (p.policy.outputSplit === undefined) runSchedule(cons);
  else p.policy.outputSplit.emitConsumers(cons, steps, runSchedule);
  steps.epilogue(cons);
}

/** The consumers' registers, softmax state, warpgroup index, Q's wait, the key-tile cursor and the P·V gate. */
function declareConsumerState(cons: BlockBuilder, ctx: FmhaFwdWsContext): FmhaFwdWsConsumerState {
  const { pipeline: p, target, args, tid, smem } = ctx;
  const rows = consumerRows(cons, ctx);
  const block = new BlockEmitter(cons, target, { numThreads: p.rowThreads, index: { symbols: args.symbols }, ...rows.emitterTid });
  const sAcc = makeDistributedTensor(block, 's_acc', p.qk.cEncoding, float32);
  const operand = p.policy.qkOperand;
  const sAccInt = operand === undefined ? undefined : makeDistributedTensor(block, 's_acc_i32', p.qk.cEncoding, operand.accumulator);
  const oAcc = makeDistributedTensor(block, 'o_acc', p.pv.cEncoding, float32);
  const pFrag = block.registers('p_frag', uint32, p.pv.aRegisters);
  const softmax = new BlockOnlineSoftmax(block, p.qk.cEncoding);
  block.threads((t) => softmax.emitInit(t));
  const warpgroup = cons.let('warpgroup', int32, div(rows.tid, 128));
  p.qkSource.emitAwaitQ(cons, ctx);
  const cursor = ctx.walk.emitCursor(cons, ctx.walkCtx);
  const gate = p.policy.pvGate;
  const vote =
    gate === undefined || args.pvGate === undefined
      ? undefined
      : gate.create(
          cons,
          {
            target,
            block,
            softmax,
            iters: ctx.iters,
            m0: args.m0,
            seqlenQ: args.seqlenQ,
            warpgroup,
            tid,
            consumerThreads: p.consumerThreads,
            shared: add(smem, p.pvGateOffset),
          },
          args.pvGate,
        );
  return { block, sAcc, sAccInt, oAcc, pFrag, softmax, warpgroup, slice: rows.slice, cursor, vote };
}

/**
 * With an output split, the thread's slice (group of consumer warpgroups) and its id among the
 * block's row threads (`tid` − slice · rowThreads), which the tile code runs on; without, the thread id.
 */
function consumerRows(cons: BlockBuilder, ctx: FmhaFwdWsContext): { tid: Expr; slice?: Expr; emitterTid: { tid?: Expr } } {
  const { pipeline: p, tid } = ctx;
  if (p.slices === 1) return { tid, emitterTid: {} };
  cons.comment(
    `output split: ${p.slices} groups of ${p.rowThreads / 128} warpgroup(s) on the same rows, each owning ${p.pv.policy.tileN} columns of O`,
  );
  const slice = cons.let('o_slice', int32, div(tid, p.rowThreads));
  const rowTid = cons.let('row_tid', int32, sub(tid, mul(slice, p.rowThreads)), { range: [0, p.rowThreads - 1] });
  return { tid: rowTid, slice, emitterTid: { tid: rowTid } };
}
