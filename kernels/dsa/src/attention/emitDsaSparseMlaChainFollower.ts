// The second consumer warpgroup of the chained sparse MLA schedule: it scores the odd block of each pair, raises the
// leader's published max by its own, publishes the result for the leader, and adds both blocks' P·V to its half of O.
import { bitAnd, cast, fenceProxyAsyncShared, float32, int32, uint32 } from '@tilekit/codegen';
import { makeDistributedTensor } from '@tilekit/tile';
import type { BlockBuilder, Expr } from '@tilekit/codegen';
import type { DsaSparseMlaCta } from './dsaSparseMlaCta.ts';
import { DSA_SPARSE_MLA_CHAIN_PEER_PV, DSA_SPARSE_MLA_CHAIN_PV } from './dsaSparseMlaChainGemms.ts';
import { DSA_SPARSE_MLA_CHAIN_SLAB_BYTES, type DsaSparseMlaChainSmem } from './dsaSparseMlaChainSmem.ts';
import { DSA_SPARSE_MLA_SLABS } from './dsaSparseMlaSmem.ts';
import {
  chainTileAddr,
  DSA_CHAIN_SIGNAL,
  emitAwaitSignal,
  emitSignal,
  emitMask,
  emitPackP,
  emitPublishMax,
  emitReleaseHalf,
  emitScoreBuffer,
  emitStoreP,
  raiseToPublishedMax,
  type DsaSparseMlaChainState,
} from './dsaSparseMlaChainSteps.ts';
import { dsaSparseMlaWarpgroupThreads } from './dsaSparseMlaEpilogueState.ts';

/** The (opaque) shared address of slab `c` of key buffer `buf`. */
function slab(b: BlockBuilder, cta: DsaSparseMlaCta, buf: number, c: number): Expr {
  return chainTileAddr(b, cta, cta.layout.keys + buf * cta.layout.stageBytes + c * DSA_SPARSE_MLA_CHAIN_SLAB_BYTES);
}

/** One pair of the follower. */
function emitPair(b: BlockBuilder, cta: DsaSparseMlaCta, st: DsaSparseMlaChainState, pair: Expr): void {
  const t = cta.target;
  const layout = cta.layout as DsaSparseMlaChainSmem;
  // Buffer 1's right half first: the producer fills it second, before buffer 0's right half.
  emitScoreBuffer(b, cta, st, 1, [1, 0], b.let('parity', uint32, cast(bitAnd(pair, 1), uint32)));
  emitMask(b, cta, st, 1);
  emitAwaitSignal(b, cta, DSA_CHAIN_SIGNAL.leaderMax, pair);
  const threads = dsaSparseMlaWarpgroupThreads(b, cta, st);
  const corr = makeDistributedTensor(st.block, 'corr', st.softmax.rowEncoding, float32);
  threads.threads((th) => {
    const c = st.softmax.emitUpdate(th, st.sAcc, st.scaleLog2, { exchangeRowMax: raiseToPublishedMax(cta, st) })!;
    emitPublishMax(th, cta, st);
    for (let r = 0; r < c.size; r++) th.b.assign(corr.at(th, r), c.at(th, r));
  });
  emitSignal(b, cta, DSA_CHAIN_SIGNAL.followerMax);
  threads.threads((th) => {
    st.softmax.emitRescale(th, st.oAcc, corr);
    emitPackP(th, cta, st);
    emitStoreP(th, cta, st, layout.peerP);
  });
  b.expr(fenceProxyAsyncShared(t));
  DSA_SPARSE_MLA_CHAIN_PV.emitMma(b, t, st.oAcc, st.pOwn, { bTile: slab(b, cta, 1, 4) });
  // Buffer 1's right half goes back as soon as this P·V is done (the producer refills it first for the next pair),
  // not after the leader's hand-over: the tensor cores are busy with this P·V meanwhile anyway.
  DSA_SPARSE_MLA_CHAIN_PV.emitWait(b, t, st.oAcc, 0, st.pOwn);
  emitReleaseHalf(b, cta, 1, 1);
  emitAwaitSignal(b, cta, DSA_CHAIN_SIGNAL.leaderP, pair);
  DSA_SPARSE_MLA_CHAIN_PEER_PV.emitMma(b, t, st.oAcc, {
    aTile: slab(b, cta, 0, DSA_SPARSE_MLA_SLABS - 1),
    bTile: slab(b, cta, 0, 4),
    warpgroup: cast(0, int32),
  });
  emitSignal(b, cta, DSA_CHAIN_SIGNAL.followerP);
  DSA_SPARSE_MLA_CHAIN_PEER_PV.emitWait(b, t, st.oAcc, 0);
  emitReleaseHalf(b, cta, 0, 1);
}

/** Emits the follower over `pairs` pairs. */
export function emitDsaSparseMlaChainFollower(b: BlockBuilder, cta: DsaSparseMlaCta, st: DsaSparseMlaChainState, pairs: Expr): void {
  b.forRange({ name: 'pair', to: pairs }, (l, pair) => emitPair(l, cta, st, pair));
}
