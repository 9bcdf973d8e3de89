// The exchange that completes the partial Sᵀ and dPᵀ of FmhaBwdWsSplitDPipeline's CTAs through
// distributed shared memory: a reduce-scatter of the fp32 partials, then an all-gather of the
// fp16/bf16 Pᵀ and dSᵀ each CTA formed from its share (see the pipeline's class comment).
import {
  add,
  bitAnd,
  bitXor,
  cast,
  eq,
  float32,
  index,
  int32,
  mbarrierArriveClusterWarp,
  mbarrierArriveExpectTx,
  mbarrierWaitParityCluster,
  mapaShared,
  mul,
  namedBarrierSync,
  packFloat2,
  pointer,
  select,
  storeAsyncClusterV4U32,
  shr,
  sub,
  ne,
  bool,
  storeAsyncClusterV4,
  fenceProxyAsyncShared,
  uint32,
  type BlockBuilder,
  type Expr,
} from '@tilekit/codegen';
import { emitCalculateOffset } from '@tilekit/layout';
import {
  emitPartitionIndex,
  emitXIndex,
  sweepOrder,
  type BlockEmitter,
  type DistributedTensor,
  type RegisterArray,
  type ThreadScope,
  type TileDistributionEncoding,
} from '@tilekit/tile';
import type { FmhaBwdWsSplitDContext } from './fmhaBwdWsSplitDContext.ts';

/** Column groups of a consumer thread's Sᵀ/dPᵀ accumulator: group j holds elements 4j … 4j + 3, queries 8j … 8j + 7 of its warpgroup's. */
export const FMHA_BWD_SPLIT_D_GROUPS = 4;

/** What the exchange reads and completes: the consumers' emitter and the partial accumulators. */
export interface FmhaBwdWsSplitDPartials {
  readonly ctx: FmhaBwdWsSplitDContext;
  emitter(bb: BlockBuilder): BlockEmitter;
  readonly sAcc: DistributedTensor;
  readonly dpAcc: DistributedTensor;
}

/**
 * This CTA's share of a query tile's Sᵀ and dPᵀ: column groups rank + g·C (g < 4 / C, C the CTAs
 * of the cluster), element 4g + i of `s` and `dp` being element 4(rank + g·C) + i of the accumulators.
 * The reduce-scatter completes them (then the softmax gradient turns them into Pᵀ and dSᵀ in place).
 */
export interface FmhaBwdWsSplitDShare {
  readonly s: RegisterArray;
  readonly dp: RegisterArray;
  /** Groups per CTA: 4 / C. */
  readonly groups: number;
}

/**
 * Checks the fact the share relies on: in `encoding` (the Sᵀ/dPᵀ accumulator) element 4j + i of every
 * thread sits 8j columns right of its element i. Returns the rule it broke, or undefined.
 */
export function fmhaBwdWsSplitDGroupRule(encoding: TileDistributionEncoding): string | undefined {
  if (encoding.threadBufferSize !== 4 * FMHA_BWD_SPLIT_D_GROUPS) return `a thread holds ${4 * FMHA_BWD_SPLIT_D_GROUPS} elements`;
  const threads = encoding.pLengths.reduce((a, b) => a * b, 1);
  for (let tid = 0; tid < threads; tid++) {
    const ps = splitIndex(tid, encoding.pLengths);
    const xs = new Map(sweepOrder(encoding).map((ys) => [encoding.calculateD(ys), encoding.calculateXIndex(ps, ys)]));
    for (const [d, x] of xs) {
      const base = xs.get(d % 4)!;
      if (x[0] !== base[0] || x[1] !== base[1]! + 8 * Math.floor(d / 4)) return 'element 4j + i sits 8j columns right of element i';
    }
  }
  return undefined;
}

function splitIndex(k: number, lengths: readonly number[]): number[] {
  const out = new Array<number>(lengths.length).fill(0);
  for (let i = lengths.length - 1; i >= 0; i--) {
    out[i] = k % lengths[i]!;
    k = Math.floor(k / lengths[i]!);
  }
  return out;
}

/** Element 4g + i of CTA `owner`'s share in this thread's accumulator `acc` (a select over the ranks). */
function pick(t: ThreadScope, acc: DistributedTensor, owner: Expr, ctas: number, g: number, i: number): Expr {
  const of = (r: number): Expr => acc.at(t, 4 * (r + g * ctas) + i);
  let value = of(ctas - 1);
  for (let r = ctas - 2; r >= 0; r--) value = select(eq(owner, r), of(r), value);
  return value;
}

/** Vector v (16 bytes) of consumer thread `tid` in receive slot `slot` (the partials of CTA rank ⊕ (slot + 1)). */
function slot(ctx: FmhaBwdWsSplitDContext, s: number, v: number, tid: Expr): Expr {
  const p = ctx.pipeline;
  return add(ctx.smem, add(p.offsets.x + s * p.slotBytes, mul(add(v * p.consumerThreads, tid), 16)));
}

/** The peers of this CTA: rank ⊕ s for s = 1 … C − 1. */
function peersOf(b: BlockBuilder, ctx: FmhaBwdWsSplitDContext): Expr[] {
  return Array.from({ length: ctx.pipeline.clusterCtas - 1 }, (_, k) =>
    b.let(`x_peer${k + 1}`, uint32, cast(bitXor(ctx.rank, k + 1), uint32)),
  );
}

/**
 * The reduce-scatter of query tile number `tile` (0, 1, … per CTA): this CTA's groups into `share`;
 * once every peer is free to take them, each peer's groups (fp32) into its receive slot (`st.async`,
 * completing on the peer's rsFull); once the peers' have landed, they are added to the share (in slot
 * order: every element summed once, by its owner); then every peer may write its Pᵀ/dSᵀ here.
 * Returns the tile's barrier parity.
 */
export function emitFmhaBwdWsSplitDReduceScatter(
  b: BlockBuilder,
  x: FmhaBwdWsSplitDPartials,
  share: FmhaBwdWsSplitDShare,
  tile: Expr,
): Expr {
  const { ctx } = x;
  const { pipeline: p, target, tid } = ctx;
  const C = p.clusterCtas;
  const G = share.groups;
  const parity = b.let('x_parity', uint32, cast(bitAnd(tile, 1), uint32));
  const accs = [x.sAcc, x.dpAcc] as const;
  const shares = [share.s, share.dp] as const;
  x.emitter(b).threads((t) => {
    for (let m = 0; m < 2; m++)
      for (let e = 0; e < 4 * G; e++) t.b.assign(shares[m]!.at(t, e), pick(t, accs[m]!, ctx.rank, C, Math.floor(e / 4), e % 4));
  });
  if (C === 1) return parity;
  b.comment(`reduce-scatter over ${C} CTAs: each peer's ${G} group(s) of partial Sᵀ and dPᵀ into its slot, the peers' into ours`);
  b.if(eq(tid, 0), (one) => {
    one.expr(mbarrierArriveExpectTx(target, ctx.rsFull, p.rsBytes));
    one.expr(mbarrierArriveExpectTx(target, ctx.agFull, p.agBytes));
  });
  // Every peer's GEMMs of the previous tile are done with its Pᵀ/dSᵀ (which our slots overlap); the first tile passes at once.
  b.expr(mbarrierWaitParityCluster(target, ctx.rsReady, bitXor(parity, 1)));
  const peers = peersOf(b, ctx);
  peers.forEach((peer, k) => {
    const peerFull = b.let('x_peer_full', uint32, mapaShared(target, ctx.rsFull, peer));
    x.emitter(b).threads((t) => {
      // This CTA is rank ⊕ (k + 1) for the peer too: its slot k.
      const remote = t.b.let('x_remote', uint32, mapaShared(target, slot(ctx, k, 0, tid), peer));
      for (let m = 0; m < 2; m++)
        for (let g = 0; g < G; g++) {
          const values = [0, 1, 2, 3].map((i) => pick(t, accs[m]!, peer, C, g, i)) as [Expr, Expr, Expr, Expr];
          t.b.expr(storeAsyncClusterV4(target, add(remote, (m * G + g) * p.consumerThreads * 16), peerFull, values));
        }
    });
  });
  b.expr(mbarrierWaitParityCluster(target, ctx.rsFull, parity));
  x.emitter(b).threads((t) => {
    for (let k = 0; k < C - 1; k++)
      for (let m = 0; m < 2; m++)
        for (let g = 0; g < G; g++) {
          const words = t.b.let('x_words', pointer(float32), cast(slot(ctx, k, m * G + g, tid), pointer(float32)));
          for (let i = 0; i < 4; i++) t.b.assign(shares[m]!.at(t, 4 * g + i), add(shares[m]!.at(t, 4 * g + i), index(words, i)));
        }
  });
  b.comment('our slots read: every peer may write its Pᵀ and dSᵀ over them');
  for (const peer of peers) b.expr(mbarrierArriveClusterWarp(target, mapaShared(target, ctx.agReady, peer)));
  return parity;
}

/**
 * The (key, query) coordinates of element 4g + i of this thread's share: element i's of the
 * accumulator, 8·(rank + g·C) columns right (the fact fmhaBwdWsSplitDGroupRule checks).
 */
export function fmhaBwdWsSplitDShareCoords(
  t: ThreadScope,
  x: FmhaBwdWsSplitDPartials,
  groups: number,
): (g: number, i: number) => [Expr, Expr] {
  const enc = x.sAcc.encoding;
  const ps = emitPartitionIndex(t, enc);
  const base = new Map<number, Expr[]>();
  for (const ys of sweepOrder(enc)) {
    const d = enc.calculateD(ys);
    if (d < 4) base.set(d, emitXIndex(t, enc, ps, ys));
  }
  const C = x.ctx.pipeline.clusterCtas;
  const shift = Array.from({ length: groups }, (_, g) => t.b.let('share_col', int32, mul(add(x.ctx.rank, g * C), 8)));
  return (g, i) => [base.get(i)![0]!, add(base.get(i)![1]!, shift[g]!)];
}

/**
 * A 4 × 4 transpose of 32-bit words across the four lanes of a quad (lanes 4k … 4k + 3): lane i's
 * word k becomes lane k's word i. Two exchanges with the lane i ⊕ 2, then i ⊕ 1 partner, one
 * shuffle per pair of words each.
 */
export function emitQuadTranspose(t: ThreadScope, words: readonly Expr[], lane: Expr): Expr[] {
  const { target } = t.block;
  let cur = [...words];
  for (const bit of [2, 1]) {
    const hi = t.b.let('qt_hi', bool, ne(bitAnd(lane, bit), 0));
    const next = [...cur];
    for (const c0 of [0, 1, 2, 3].filter((c) => (c & bit) === 0)) {
      const c1 = c0 | bit;
      const y = t.b.let('qt_y', uint32, target.shflXor(select(hi, cur[c0]!, cur[c1]!), bit));
      next[c0] = select(hi, y, cur[c0]!);
      next[c1] = select(hi, cur[c1]!, y);
    }
    cur = next.map((w) => t.b.let('qt_w', uint32, w));
  }
  return cur;
}

/**
 * The all-gather: once both warpgroups are done with the previous tile's Pᵀ/dSᵀ (and with our slots),
 * and every peer has read its slots, the share's Pᵀ and dSᵀ go into this CTA's tiles and every
 * peer's. Per group a thread packs 4 words (fp16/bf16 pairs of adjacent queries: Pᵀ at key rows r and
 * r + 8, then dSᵀ), a quad transpose gives lane i of the quad the 16 bytes of 8 queries of tile i ≫ 1
 * at row r + 8·(i & 1), and one `st.async` each peer takes them (completing on its agFull). Once the
 * peers' have landed, the tiles are visible to the async proxy and both warpgroups.
 */
export function emitFmhaBwdWsSplitDAllGather(b: BlockBuilder, x: FmhaBwdWsSplitDPartials, share: FmhaBwdWsSplitDShare, parity: Expr): void {
  const { ctx } = x;
  const { pipeline: p, target } = ctx;
  const C = p.clusterCtas;
  const slab = p.offsets.dsT - p.offsets.pT;
  b.expr(namedBarrierSync(target, 1, p.consumerThreads));
  if (C > 1) b.expr(mbarrierWaitParityCluster(target, ctx.agReady, parity));
  const remotes = peersOf(b, ctx).map((peer) => ({
    tile: b.let('ag_remote', uint32, mapaShared(target, add(ctx.smem, p.offsets.pT), peer)),
    full: b.let('ag_full', uint32, mapaShared(target, ctx.agFull, peer)),
  }));
  const block = x.emitter(b);
  block.threads((t) => {
    const coords = fmhaBwdWsSplitDShareCoords(t, x, share.groups);
    const lane = t.b.let('ag_lane', int32, bitAnd(t.tid, 3));
    // This lane's 16 bytes: tile lane ≫ 1 (Pᵀ, dSᵀ), key row r + 8·(lane & 1).
    const tileBytes = t.b.let('ag_tile', int32, add(p.offsets.pT, mul(shr(lane, 1), slab)));
    for (let g = 0; g < share.groups; g++) {
      const e = 4 * g;
      const pair = (r: RegisterArray, k: number): Expr => packFloat2(target, p.policy.dtype, r.at(t, e + k), r.at(t, e + k + 1));
      const words = [pair(share.s, 0), pair(share.s, 2), pair(share.dp, 0), pair(share.dp, 2)].map((w) => t.b.let('ag_pair', uint32, w));
      const chunk = emitQuadTranspose(t, words, lane);
      const [key, query] = coords(g, 0);
      const at = [add(key, mul(bitAnd(lane, 1), 8)), sub(query, mul(lane, 2))];
      const { offset } = emitCalculateOffset(t.b, p.kv.aLayout.descriptor, at, block.indexEmitter);
      const bytes = t.b.let('ag_bytes', int32, add(tileBytes, mul(offset, 2)));
      const local = t.b.let('ag_words', pointer(uint32), cast(add(ctx.smem, bytes), pointer(uint32)));
      chunk.forEach((w, k) => t.b.assign(index(local, k), w));
      for (const r of remotes)
        t.b.expr(
          storeAsyncClusterV4U32(target, add(r.tile, cast(sub(bytes, p.offsets.pT), uint32)), r.full, chunk as [Expr, Expr, Expr, Expr]),
        );
    }
  });
  if (C > 1) b.expr(mbarrierWaitParityCluster(target, ctx.agFull, parity));
  b.expr(fenceProxyAsyncShared(target));
  b.expr(namedBarrierSync(target, 2, p.consumerThreads));
}

/** After the query tile's GEMMs read Pᵀ and dSᵀ: every peer may send its next tile's partials here (each warp arrives once per peer). */
export function emitFmhaBwdWsSplitDRelease(b: BlockBuilder, ctx: FmhaBwdWsSplitDContext): void {
  if (ctx.pipeline.clusterCtas === 1) return;
  b.comment("Pᵀ and dSᵀ read: every peer may send its next tile's partials into this CTA's slots");
  for (const peer of peersOf(b, ctx)) b.expr(mbarrierArriveClusterWarp(ctx.target, mapaShared(ctx.target, ctx.rsReady, peer)));
}
