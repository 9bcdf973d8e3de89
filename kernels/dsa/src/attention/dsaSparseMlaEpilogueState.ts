// What the end of a sparse MLA block (its epilogue) sees of a consumer warpgroup, and the epilogue hook itself: shared
// by the pairwise and the chained consumer schedules.
import { bitAnd, eq, type BlockBuilder, type Expr } from '@tilekit/codegen';
import type { BlockOnlineSoftmax } from '@tilekit/fmha';
import { BlockEmitter, type DistributedTensor } from '@tilekit/tile';
import type { DsaSparseMlaCta } from './dsaSparseMlaCta.ts';

/** What an epilogue reads of a consumer warpgroup: its emitter, indices, O accumulator and softmax state. */
export interface DsaSparseMlaEpilogueState {
  readonly block: BlockEmitter;
  /** `int` warpgroup (0 or 1: its half of V) and thread within it. */
  readonly wg: Expr;
  readonly wtid: Expr;
  readonly oAcc: DistributedTensor;
  readonly softmax: BlockOnlineSoftmax;
}

/** What an epilogue gets besides the block and the consumer state: the V columns each warpgroup owns and its row-writer predicate. */
export interface DsaSparseMlaEpilogueArgs {
  readonly columns: number;
  /** True in the lanes that write a row's scalars (one per row and warpgroup). */
  readonly rowWriter: Expr;
}

/** The end of a block after the last pair (row sums joined first): what it writes and where. */
export type DsaSparseMlaEpilogue = (
  b: BlockBuilder,
  cta: DsaSparseMlaCta,
  state: DsaSparseMlaEpilogueState,
  v: DsaSparseMlaEpilogueArgs,
) => void;

/** The lanes of a row whose replica bits are 0 write its shared values. */
export function dsaSparseMlaRowWriter(state: DsaSparseMlaEpilogueState): Expr {
  return eq(
    bitAnd(
      state.wtid,
      state.softmax.laneMasks.reduce((a, m) => a | m, 0),
    ),
    0,
  );
}

/** The warpgroup's 128 threads on `b` (nested in its block emitter): where a consumer step emits per-thread code. */
export function dsaSparseMlaWarpgroupThreads(b: BlockBuilder, cta: DsaSparseMlaCta, state: DsaSparseMlaEpilogueState): BlockEmitter {
  return new BlockEmitter(b, cta.target, { numThreads: 128, tid: state.wtid }, state.block);
}
