// The first consumer warpgroup of the chained sparse MLA schedule (FlashMLA's sm90 prefill order): it scores the even
// block of each pair with its own running max, starts its P·V at once, then adopts the follower's max, hands over its
// rescaled P and adds the follower's P·V — and issues the next pair's Q·Kᵀ behind that last P·V.
import { add, bitAnd, cast, fenceProxyAsyncShared, float32, gt, int32, lt, mul, uint32 } from '@tilekit/codegen';
import { makeDistributedTensor } from '@tilekit/tile';
import type { BlockBuilder, Expr } from '@tilekit/codegen';
import { dsaSparseMlaStage, type DsaSparseMlaCta } from './dsaSparseMlaCta.ts';
import { DSA_SPARSE_MLA_CHAIN_PEER_PV, DSA_SPARSE_MLA_CHAIN_PV, DSA_SPARSE_MLA_CHAIN_QK } from './dsaSparseMlaChainGemms.ts';
import type { DsaSparseMlaChainSmem } from './dsaSparseMlaChainSmem.ts';
import { DSA_SPARSE_MLA_CHAIN_SLAB_BYTES } from './dsaSparseMlaChainSmem.ts';
import { DSA_SPARSE_MLA_SLABS } from './dsaSparseMlaSmem.ts';
import {
  chainTileAddr,
  DSA_CHAIN_SIGNAL,
  emitAwaitSignal,
  emitSignal,
  emitAdoptPublishedMax,
  emitAwaitHalf,
  emitMask,
  emitPackP,
  emitPublishMax,
  emitQkHalf,
  emitReleaseHalf,
  emitScoreBuffer,
  emitStoreP,
  type DsaSparseMlaChainState,
} from './dsaSparseMlaChainSteps.ts';
import { dsaSparseMlaWarpgroupThreads } from './dsaSparseMlaEpilogueState.ts';

/** Softmax of the even block with the leader's own max, the max published, O_left += P·V0 and buffer 0's left half released. */
function emitOwnBlock(b: BlockBuilder, cta: DsaSparseMlaCta, st: DsaSparseMlaChainState): void {
  const t = cta.target;
  emitMask(b, cta, st, 0);
  dsaSparseMlaWarpgroupThreads(b, cta, st).threads((th) => {
    const corr = st.softmax.emitUpdate(th, st.sAcc, st.scaleLog2)!;
    // The leader's rescales only: the follower's too costs the consumers a 20-byte spill.
    st.softmax.emitRescaleUnlessUnit(th, st.oAcc, corr);
    emitPublishMax(th, cta, st);
    emitPackP(th, cta, st);
  });
  emitSignal(b, cta, DSA_CHAIN_SIGNAL.leaderMax);
  DSA_SPARSE_MLA_CHAIN_PV.emitMma(b, t, st.oAcc, st.pOwn, { bTile: chainTileAddr(b, cta, dsaSparseMlaStage(cta, 0)) });
  DSA_SPARSE_MLA_CHAIN_PV.emitWait(b, t, st.oAcc, 0, st.pOwn);
  emitReleaseHalf(b, cta, 0, 0);
}

/**
 * Adopts the follower's max (its P first: S rescaled by f = 2^(m − m'), packed and written into buffer 0's RoPE slab for
 * the follower, which is told at once), then O and l rescaled by f, and once the follower's P is in, O_left += P_f·V1.
 */
function emitHandOver(b: BlockBuilder, cta: DsaSparseMlaCta, st: DsaSparseMlaChainState, pair: Expr): void {
  const t = cta.target;
  const layout = cta.layout as DsaSparseMlaChainSmem;
  emitAwaitSignal(b, cta, DSA_CHAIN_SIGNAL.followerMax, pair);
  const threads = dsaSparseMlaWarpgroupThreads(b, cta, st);
  const f = makeDistributedTensor(st.block, 'adopt', st.softmax.rowEncoding, float32);
  threads.threads((th) => {
    emitAdoptPublishedMax(th, cta, st, f);
    st.softmax.emitRescale(th, st.sAcc, f);
    emitPackP(th, cta, st);
    emitStoreP(th, cta, st, add(dsaSparseMlaStage(cta, 0), (DSA_SPARSE_MLA_SLABS - 1) * DSA_SPARSE_MLA_CHAIN_SLAB_BYTES));
  });
  b.expr(fenceProxyAsyncShared(t));
  emitSignal(b, cta, DSA_CHAIN_SIGNAL.leaderP);
  threads.threads((th) => {
    st.softmax.emitRescaleUnlessUnit(th, st.oAcc, f);
    for (let r = 0; r < st.softmax.l.size; r++) th.b.assign(st.softmax.l.at(th, r), mul(st.softmax.l.at(th, r), f.at(th, r)));
  });
  emitAwaitSignal(b, cta, DSA_CHAIN_SIGNAL.followerP, pair);
  DSA_SPARSE_MLA_CHAIN_PEER_PV.emitMma(b, t, st.oAcc, {
    aTile: chainTileAddr(b, cta, layout.peerP),
    bTile: chainTileAddr(b, cta, dsaSparseMlaStage(cta, 1)),
    warpgroup: cast(0, int32),
  });
}

/** The next pair's Q·Kᵀ of buffer 0, issued behind the follower-P P·V, which is waited for (and buffer 1's left half released) in between. */
function emitNextScores(b: BlockBuilder, cta: DsaSparseMlaCta, st: DsaSparseMlaChainState, pair: Expr): void {
  const parity = b.let('next_parity', uint32, cast(bitAnd(add(pair, 1), 1), uint32));
  emitAwaitHalf(b, cta, 0, 0, parity);
  emitQkHalf(b, cta, st, 0, 0, true);
  DSA_SPARSE_MLA_CHAIN_PEER_PV.emitWait(b, cta.target, st.oAcc, 1);
  emitReleaseHalf(b, cta, 1, 0);
  emitAwaitHalf(b, cta, 0, 1, parity);
  emitQkHalf(b, cta, st, 0, 1, false);
  DSA_SPARSE_MLA_CHAIN_QK.emitWait(b, cta.target, st.sAcc, 0);
}

/** One pair of the leader: its block, the hand-over, then the next pair's Q·Kᵀ where there is one. */
function emitPair(b: BlockBuilder, cta: DsaSparseMlaCta, st: DsaSparseMlaChainState, pair: Expr, pairs: Expr): void {
  emitOwnBlock(b, cta, st);
  emitHandOver(b, cta, st, pair);
  b.if(
    lt(add(pair, 1), pairs),
    (x) => emitNextScores(x, cta, st, pair),
    (x) => {
      DSA_SPARSE_MLA_CHAIN_PEER_PV.emitWait(x, cta.target, st.oAcc, 0);
      emitReleaseHalf(x, cta, 1, 0);
    },
  );
}

/** Emits the leader over `pairs` pairs: the first pair's Q·Kᵀ, then the pairs. */
export function emitDsaSparseMlaChainLeader(b: BlockBuilder, cta: DsaSparseMlaCta, st: DsaSparseMlaChainState, pairs: Expr): void {
  b.if(gt(pairs, 0), (x) => emitScoreBuffer(x, cta, st, 0, [0, 1], cast(0, uint32)));
  b.forRange({ name: 'pair', to: pairs }, (l, pair) => emitPair(l, cta, st, pair, pairs));
}
