// The exchange that completes the partial Sᵀ and dPᵀ of FmhaBwdWsSplitDPipeline's CTAs through
// distributed shared memory: a reduce-scatter of the fp32 partials, then an all-gather of the
// fp16/bf16 Pᵀ and dSᵀ each CTA formed from its share (see the pipeline's class comment).
import {
  add,
  bitAnd,
  bitXor,
  cast,
  div,
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
  storeAsyncClusterU32,
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
 * The all-gather: once both warpgroups are done with the previous tile's Pᵀ/dSᵀ (and with our slots),
 * and every peer has read its slots, the share's Pᵀ and dSᵀ (fp16/bf16 pairs of adjacent queries)
 * go into this CTA's tiles and every peer's (`st.async`, completing on its agFull); once the peers'
 * have landed, the tiles are visible to the async proxy and both warpgroups.
 */
export function emitFmhaBwdWsSplitDAllGather(b: BlockBuilder, x: FmhaBwdWsSplitDPartials, share: FmhaBwdWsSplitDShare, parity: Expr): void {
  const { ctx } = x;
  const { pipeline: p, target } = ctx;
  const C = p.clusterCtas;
  b.expr(namedBarrierSync(target, 1, p.consumerThreads));
  if (C > 1) b.expr(mbarrierWaitParityCluster(target, ctx.agReady, parity));
  const pWords = b.let('pt_words', pointer(uint32), cast(add(ctx.smem, p.offsets.pT), pointer(uint32)));
  const dsWords = b.let('dst_words', pointer(uint32), cast(add(ctx.smem, p.offsets.dsT), pointer(uint32)));
  const remotes = peersOf(b, ctx).map((peer) => ({
    tile: b.let('ag_remote', uint32, mapaShared(target, add(ctx.smem, p.offsets.pT), peer)),
    full: b.let('ag_full', uint32, mapaShared(target, ctx.agFull, peer)),
  }));
  const block = x.emitter(b);
  block.threads((t) => {
    const coords = fmhaBwdWsSplitDShareCoords(t, x, share.groups);
    for (let g = 0; g < share.groups; g++)
      for (let h = 0; h < 2; h++) {
        const e = 4 * g + 2 * h;
        // Elements e, e + 1 are adjacent queries of one key row: one 32-bit word each.
        const { offset } = emitCalculateOffset(t.b, p.kv.aLayout.descriptor, coords(g, 2 * h), block.indexEmitter);
        const word = t.b.let('pds_word', int32, div(offset, 2));
        const pw = t.b.let('pt_pair', uint32, packFloat2(target, p.policy.dtype, share.s.at(t, e), share.s.at(t, e + 1)));
        const dw = t.b.let('dst_pair', uint32, packFloat2(target, p.policy.dtype, share.dp.at(t, e), share.dp.at(t, e + 1)));
        t.b.assign(index(pWords, word), pw);
        t.b.assign(index(dsWords, word), dw);
        const bytes = t.b.let('pds_bytes', uint32, cast(mul(word, 4), uint32));
        for (const r of remotes) {
          t.b.expr(storeAsyncClusterU32(target, add(r.tile, bytes), r.full, pw));
          t.b.expr(storeAsyncClusterU32(target, add(r.tile, add(bytes, p.offsets.dsT - p.offsets.pT)), r.full, dw));
        }
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
