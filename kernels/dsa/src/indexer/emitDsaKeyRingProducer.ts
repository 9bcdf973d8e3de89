// The producer both indexer kernels run on one thread: the query block once, then key tiles (64
// tokens of e4m3 and their 64 fp32 scales) into the ring, each stage armed with its bytes.
import {
  add,
  bitAnd,
  bitXor,
  cast,
  div,
  int32,
  mbarrierArriveExpectTx,
  mbarrierWaitParity,
  mul,
  prefetchTensorMap,
  tmaLoad,
  uint32,
  type BlockBuilder,
  type Expr,
  type ExprLike,
  type Target,
} from '@tilekit/codegen';
import { DSA_INDEX_HEAD_DIM, DSA_PAGE_SCALE_OFFSET, DSA_PAGE_TOKENS } from '../dsaShape.ts';
import type { DsaIndexerSmem } from './dsaIndexerSmem.ts';
import type { DsaRingBarriers } from './emitDsaRingBarriers.ts';

/** What the producer loads and where. */
export interface DsaKeyRingLoads {
  readonly comment: string;
  readonly maps: { readonly q: Expr; readonly kv: Expr; readonly scale: Expr };
  /** The dynamic shared memory base (generic pointer) and its plan. */
  readonly smem: Expr;
  readonly layout: DsaIndexerSmem;
  readonly bars: DsaRingBarriers;
  readonly stages: number;
  /** Query-block rows (the `once` barrier's bytes are rows × 128) and the first row's TMA coordinate. */
  readonly qRows: number;
  readonly qRow: Expr;
  /** Key tiles to load. */
  readonly count: Expr;
  /** The TMA coordinates of tile i's keys and scales (may declare variables in `l`, after the stage is armed). */
  readonly coords: (l: BlockBuilder, i: Expr) => { readonly kv: readonly ExprLike[]; readonly scale: readonly ExprLike[] };
}

/**
 * Emits the producer: prefetch the three tensor maps, the query block onto `bars.once`, then for
 * tile i (stage s = i mod stages, round r = i / stages): wait empty[s] with parity (r & 1) ^ 1, arm
 * full[s] with the key tile's and scales' bytes, and load both onto it.
 */
export function emitDsaKeyRingProducer(b: BlockBuilder, t: Target, v: DsaKeyRingLoads): void {
  const S = v.stages;
  b.comment(v.comment);
  for (const map of [v.maps.q, v.maps.kv, v.maps.scale]) b.expr(prefetchTensorMap(t, map));
  b.expr(mbarrierArriveExpectTx(t, v.bars.once, v.qRows * DSA_INDEX_HEAD_DIM));
  b.expr(tmaLoad(t, { dst: add(v.smem, v.layout.q), map: v.maps.q, bar: v.bars.once, coords: [0, v.qRow] }));
  b.forRange({ name: 'i', to: v.count }, (l, i) => {
    const s = l.let('s', int32, bitAnd(i, S - 1));
    const parity = l.let('parity', uint32, cast(bitAnd(div(i, S), 1), uint32));
    l.expr(mbarrierWaitParity(t, v.bars.empty(s), bitXor(parity, 1)));
    l.expr(mbarrierArriveExpectTx(t, v.bars.full(s), DSA_PAGE_SCALE_OFFSET + DSA_PAGE_TOKENS * 4));
    const at = v.coords(l, i);
    const kvDst = add(v.smem, add(v.layout.kv, mul(s, DSA_PAGE_SCALE_OFFSET)));
    l.expr(tmaLoad(t, { dst: kvDst, map: v.maps.kv, bar: v.bars.full(s), coords: [...at.kv] }));
    const scaleDst = add(v.smem, add(v.layout.scales, mul(s, DSA_PAGE_TOKENS * 4)));
    l.expr(tmaLoad(t, { dst: scaleDst, map: v.maps.scale, bar: v.bars.full(s), coords: [...at.scale] }));
  });
}
