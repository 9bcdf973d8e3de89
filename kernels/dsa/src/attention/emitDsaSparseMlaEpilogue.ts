// The end of a sparse MLA block: the two warpgroups' thread-partial row sums joined (thread t of
// each holds the same rows), O /= l, the attention sink, and O, LSE and max logits written with
// FlashMLA's conventions (a row with no valid token: O = 0, LSE = +∞, max = −∞).
import { add, and, call, div, eq, float32, index, infinity, int32, lit, mul, ne, select, sub, type BlockBuilder } from '@tilekit/codegen';
import { makeDistributedTensor, storeTile, sweepTile } from '@tilekit/tile';
import type { DsaSparseMlaCta } from './dsaSparseMlaCta.ts';
import type { DsaSparseMlaEpilogueState, DsaSparseMlaEpilogueArgs } from './dsaSparseMlaEpilogueState.ts';
import { dsaSparseMlaOutWindow } from './dsaSparseMlaOutWindow.ts';
import { joinDsaSparseMlaRowSums } from './joinDsaSparseMlaRowSums.ts';

const LN2 = Math.LN2;

/**
 * Emits the epilogue of both warpgroups: row sums joined, O scaled by 1/l (0 where l = 0), by
 * e^lse / (e^lse + e^sink) where a sink is given, stored as bf16 to columns [columns · wg, +columns)
 * of the block's 64 output rows; warpgroup 0's row writers store LSE (natural log; +∞ where l = 0)
 * and the max logit (max of sm_scale · q·k over valid tokens; −∞ where none).
 */
export function emitDsaSparseMlaEpilogue(
  b: BlockBuilder,
  cta: DsaSparseMlaCta,
  state: DsaSparseMlaEpilogueState,
  v: DsaSparseMlaEpilogueArgs,
): void {
  const { args } = cta;
  b.comment('epilogue: row sums of both warpgroups, O /= l, the sink, O / LSE / max logits out');
  joinDsaSparseMlaRowSums(b, cta, state);
  const window = dsaSparseMlaOutWindow(state, args.out, v.columns, 2);
  const softmax = state.softmax;
  state.block.threads((th) => {
    const lse = softmax.emitFinalize(th, state.oAcc, { lse: true })!;
    const sinkScale = makeDistributedTensor(state.block, 'sink_scale', softmax.rowEncoding, float32);
    const hasSink = th.b.let('has_sink', int32, select(args.attnSink, 1, 0));
    sweepTile(th, lse, (e) => {
      const sink = e.b.let(
        'sink',
        float32,
        select(ne(hasSink, 0), index(args.attnSink, add(args.head0, e.x[0]!)), infinity(float32, { negative: true })),
      );
      const live = ne(e.value, infinity(float32, { negative: true }));
      const f = div(lit(1, float32), add(lit(1, float32), call('expf', [sub(sink, e.value)], float32)));
      e.b.assign(sinkScale.at(th, e.d), select(live, f, lit(1, float32)));
    });
    softmax.emitRescale(th, state.oAcc, sinkScale);
    storeTile(th, window, state.oAcc);
    sweepTile(th, lse, (e) =>
      e.b.if(and(eq(state.wg, 0), v.rowWriter), (w) => {
        const live = ne(e.value, infinity(float32, { negative: true }));
        const at = args.scalarStride === undefined ? e.x[0]! : mul(e.x[0]!, args.scalarStride);
        w.assign(index(args.lse, at), select(live, e.value, infinity(float32)));
        w.assign(index(args.maxLogits, at), mul(softmax.m.at(th, e.d), LN2));
      }),
    );
  });
}
