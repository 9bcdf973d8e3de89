// The row sums of a sparse MLA block's two consumer warpgroups joined before any epilogue divides by them.
import { add, cast, float32, index, mul, namedBarrierSync, pointer, sub, type BlockBuilder, type Expr } from '@tilekit/codegen';
import type { DsaSparseMlaCta } from './dsaSparseMlaCta.ts';
import type { DsaSparseMlaEpilogueState } from './dsaSparseMlaEpilogueState.ts';

/** Named barrier of the join (0 is __syncthreads; the consumers use 1 and 2). */
const BAR_SUM = 3;

/**
 * Adds the other warpgroup's thread-partial row sums to this thread's (thread t of each warpgroup holds
 * the same rows): each publishes its sums in the row-sum region, both sync on a named barrier of the
 * 256 consumer threads, then each adds the other's.
 */
export function joinDsaSparseMlaRowSums(b: BlockBuilder, cta: DsaSparseMlaCta, state: DsaSparseMlaEpilogueState): void {
  const buf = b.let('row_sum_buf', pointer(float32), cast(add(cta.smem, cta.layout.rowSum), pointer(float32)));
  const l = state.softmax.l;
  const slot = (wg: Expr, r: number): Expr => add(mul(add(mul(wg, l.size), r), 128), state.wtid);
  state.block.threads((th) => {
    for (let r = 0; r < l.size; r++) th.b.assign(index(buf, slot(state.wg, r)), l.at(th, r));
  });
  b.expr(namedBarrierSync(cta.target, BAR_SUM, 256));
  state.block.threads((th) => {
    for (let r = 0; r < l.size; r++) th.b.assign(l.at(th, r), add(l.at(th, r), index(buf, slot(sub(1, state.wg), r))));
  });
}
