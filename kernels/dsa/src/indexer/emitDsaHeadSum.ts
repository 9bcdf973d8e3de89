// The indexer epilogue's first step: Σ_h w[query, h] · ReLU(acc) per (row, query), completed across lanes.
import { add, call, float32, int32, type Expr, type Target, type VarExpr } from '@tilekit/codegen';
import { emitPartitionIndex, emitXIndex, type DistributedTensor, type ThreadScope } from '@tilekit/tile';
import type { DsaHeadSumPlan } from './dsaHeadSumPlan.ts';

/** The head sums one thread ends with: every lane of a sharing group holds the full sums of its rows. */
export interface DsaHeadSums {
  /** `sums[slot][query]` (fp32 registers). */
  readonly sums: readonly (readonly VarExpr[])[];
  /** The tile row of each slot (`int`). */
  readonly rows: readonly Expr[];
}

/**
 * Emits, for the calling thread, sums[slot][query] = Σ over its elements d of the group
 * w(column of d) · max(acc[d], 0) (fp32 FMAs in the plan's order), then adds the partners' sums
 * through xor shuffles over `plan.shuffleMasks`; `weight(col)` reads the query-head weight of tile
 * column col (q scale and softmax scale folded in).
 */
export function emitDsaHeadSum(
  t: ThreadScope,
  target: Target,
  acc: DistributedTensor,
  plan: DsaHeadSumPlan,
  weight: (col: Expr) => Expr,
): DsaHeadSums {
  const enc = acc.encoding;
  const ps = emitPartitionIndex(t, enc);
  const xOf = (d: number): readonly Expr[] => emitXIndex(t, enc, ps, enc.calculateYIndex(d));
  const sums = plan.groups.map((bySlot, slot) =>
    bySlot.map((ds, query) => {
      const s = t.b.var(`head_sum${slot}_${query}`, float32, 0);
      for (const d of ds) {
        const relu = call('fmaxf', [acc.at(t, d), 0], float32, { pure: true });
        t.b.assign(s, call('fmaf', [weight(xOf(d)[1]!), relu, s], float32, { pure: true }));
      }
      return s;
    }),
  );
  for (const m of plan.shuffleMasks) for (const s of sums.flat()) t.b.assign(s, add(s, target.shflXor(s, m)));
  const rows = plan.groups.map((bySlot, slot) => t.b.let(`head_row${slot}`, int32, xOf(bySlot[0]![0]!)[0]!));
  return { sums, rows };
}
