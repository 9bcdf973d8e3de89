// The end of a split sparse MLA block (the decode's split over top-k blocks): this split's O, normalized by its
// own row sums, stored as fp32, with its LSE and max logits; the combine kernel merges the splits and applies the sink.
import { and, eq, index, mul, type BlockBuilder } from '@tilekit/codegen';
import { storeTile, sweepTile } from '@tilekit/tile';
import type { DsaSparseMlaCta } from './dsaSparseMlaCta.ts';
import type { DsaSparseMlaEpilogueState, DsaSparseMlaEpilogueArgs } from './dsaSparseMlaEpilogueState.ts';
import { dsaSparseMlaOutWindow } from './dsaSparseMlaOutWindow.ts';
import { joinDsaSparseMlaRowSums } from './joinDsaSparseMlaRowSums.ts';

/**
 * Emits the partial epilogue of both warpgroups: row sums joined, O scaled by 1/l (0 where l = 0), stored
 * as fp32 to columns [columns · wg, +columns) of the block's 64 rows at `args.out` (a `float*`);
 * warpgroup 0's row writers store the split's LSE (natural log; −∞ where it saw no valid token, so
 * the combine gives it no weight) and max logit (−∞ where none) at `args.lse` and `args.maxLogits`.
 */
export function emitDsaSparseMlaPartialEpilogue(
  b: BlockBuilder,
  cta: DsaSparseMlaCta,
  state: DsaSparseMlaEpilogueState,
  v: DsaSparseMlaEpilogueArgs,
): void {
  const { args } = cta;
  b.comment('partial epilogue: row sums of both warpgroups, O /= l as fp32, the split LSE and max logits out');
  joinDsaSparseMlaRowSums(b, cta, state);
  const window = dsaSparseMlaOutWindow(state, args.out, v.columns, 4);
  const softmax = state.softmax;
  state.block.threads((th) => {
    const lse = softmax.emitFinalize(th, state.oAcc, { lse: true })!;
    storeTile(th, window, state.oAcc);
    sweepTile(th, lse, (e) =>
      e.b.if(and(eq(state.wg, 0), v.rowWriter), (w) => {
        w.assign(index(args.lse, e.x[0]!), e.value);
        w.assign(index(args.maxLogits, e.x[0]!), mul(softmax.m.at(th, e.d), Math.LN2));
      }),
    );
  });
}
