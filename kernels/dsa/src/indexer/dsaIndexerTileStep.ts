// One indexer tile step, shared by the decode and prefill kernels: wgmma fp8 over a 64-token key tile
// and a block of (query, head) rows, the ReLU·w head sum, the key scales, the stage's release and
// the store of the (token, query) logits.
import {
  and,
  bitAnd,
  cast,
  eq,
  float32,
  infinity,
  int32,
  lt,
  mbarrierArriveWarp,
  mul,
  select,
  type BlockBuilder,
  type Expr,
  type Target,
} from '@tilekit/codegen';
import { WgmmaBlockGemmSs } from '@tilekit/gemm';
import { BlockEmitter, makeDistributedTensor, type DistributedTensor } from '@tilekit/tile';
import { DsaArgumentError } from '../dsaArgumentError.ts';
import { DSA_INDEX_HEAD_DIM, DSA_PAGE_TOKENS } from '../dsaShape.ts';
import { dsaHeadSumPlan, type DsaHeadSumPlan } from './dsaHeadSumPlan.ts';
import { emitDsaHeadSum } from './emitDsaHeadSum.ts';

/** The logit a thread holds for one (row slot, query) after a tile step. */
export interface DsaTileLogit {
  /** The key tile row (token within the tile, `int`). */
  readonly row: Expr;
  /** Query index within the warpgroup's block. */
  readonly query: number;
  /** scale[token] · Σ_h w · ReLU(q·k) (fp32; not yet masked). */
  readonly value: Expr;
}

/** Where the store of a tile's logits goes: the caller masks and addresses them. */
export interface DsaTileStore {
  /** Whether (tile row, query) is inside the query's window (`bool`). */
  readonly valid: (row: Expr, query: number) => Expr;
  /** The logits element of (tile row, query) (an lvalue), and whether to write it at all (`bool`). */
  readonly target: (row: Expr, query: Expr) => { readonly at: Expr; readonly write: Expr };
}

/**
 * A key tile of 64 tokens × a warpgroup's block of `queries · heads` (query, head) rows: the
 * block GEMM (wgmma m64n(queries·heads)k32 fp8, 4 k steps over the 128 dims) and the head-sum plan
 * of its accumulator. One warpgroup (128 threads) runs each step.
 */
export class DsaIndexerTileStep {
  readonly gemm: WgmmaBlockGemmSs;
  readonly plan: DsaHeadSumPlan;
  readonly queries: number;
  readonly heads: number;

  constructor(queries: number, heads: number) {
    this.queries = queries;
    this.heads = heads;
    this.gemm = new WgmmaBlockGemmSs({ dtype: 'fp8e4m3fn', tileM: DSA_PAGE_TOKENS, tileN: queries * heads, tileK: DSA_INDEX_HEAD_DIM });
    this.plan = dsaHeadSumPlan(this.gemm.cEncoding, queries, heads);
    if (this.plan.shuffleMasks.join() !== '1,2')
      throw new DsaArgumentError('plan', 'needs quads of lanes sharing their rows (the wgmma D fragment)', this.plan.shuffleMasks.join());
  }

  /** Declares the warpgroup's accumulator (`tid` is the thread's id within the warpgroup). */
  makeAccumulator(b: BlockBuilder, target: Target, tid: Expr): { readonly block: BlockEmitter; readonly acc: DistributedTensor } {
    const block = new BlockEmitter(b, target, { numThreads: 128, tid });
    return { block, acc: makeDistributedTensor(block, 'acc', this.gemm.cEncoding, float32) };
  }

  /**
   * Emits one step: the MMAs of key tile `kTile` (shared address of its 128B-swizzled rows) with the
   * query block `qTile`, their completion, the head sums with `weight(col)`, the token scales
   * `scale(row)` (read before the release), the warp's arrival on `release`, then `store`'s masked
   * writes: lane c of a quad writes the (slot, query) combinations c, c + 4, … of the quad's sums.
   */
  emit(
    b: BlockBuilder,
    target: Target,
    v: {
      readonly block: BlockEmitter;
      readonly acc: DistributedTensor;
      readonly tid: Expr;
      readonly kTile: Expr;
      readonly qTile: Expr;
      readonly weight: (col: Expr) => Expr;
      readonly scale: (row: Expr) => Expr;
      readonly release: Expr;
      readonly store: DsaTileStore;
    },
  ): void {
    this.gemm.emitMma(b, target, v.acc, { aTile: v.kTile, bTile: v.qTile, warpgroup: cast(0, int32), accumulate: cast(0, int32) });
    this.gemm.emitWait(b, target, v.acc, 0);
    new BlockEmitter(b, target, { numThreads: 128, tid: v.tid }, v.block).threads((th) => {
      const hs = emitDsaHeadSum(th, target, v.acc, this.plan, v.weight);
      const scale = hs.rows.map((r, slot) => th.b.let(`token_scale${slot}`, float32, v.scale(r)));
      th.b.expr(mbarrierArriveWarp(target, v.release));
      const logits = this.plan.groups.flatMap((_, slot) =>
        Array.from({ length: this.queries }, (_, query) => ({
          row: hs.rows[slot]!,
          query,
          value: mul(hs.sums[slot]![query]!, scale[slot]!),
        })),
      );
      this.emitStore(th.b, v.tid, logits, v.store);
    });
  }

  /** Lane c of a quad writes logits c, c + 4, … (the quad's lanes hold the same sums). */
  private emitStore(b: BlockBuilder, tid: Expr, logits: readonly DsaTileLogit[], store: DsaTileStore): void {
    const c = b.let('combo', int32, bitAnd(tid, 3));
    const negInf = infinity(float32, { negative: true });
    for (let round = 0; round * 4 < logits.length; round++) {
      const mine = logits.slice(round * 4, round * 4 + 4);
      const pick = <T>(f: (l: DsaTileLogit) => T, wrap: (x: T) => Expr): Expr =>
        mine.slice(0, -1).reduceRight<Expr>((rest, l, k) => select(eq(c, k), wrap(f(l)), rest), wrap(f(mine[mine.length - 1]!)));
      const row = b.let(
        `store_row${round}`,
        int32,
        pick(
          (l) => l.row,
          (x) => x,
        ),
      );
      const query = b.let(
        `store_query${round}`,
        int32,
        pick(
          (l) => l.query,
          (x) => cast(x, int32),
        ),
      );
      const value = b.let(
        `store_value${round}`,
        float32,
        pick(
          (l) => l,
          (l) => select(store.valid(l.row, l.query), l.value, negInf),
        ),
      );
      const { at, write } = store.target(row, query);
      b.if(and(lt(c, mine.length), write), (x) => x.assign(at, value));
    }
  }
}
