// The steps both warpgroups of the chained sparse MLA schedule are built from: waiting for a gathered half, Q·Kᵀ over
// its slabs, masking invalid tokens, P packed and written for the other warpgroup, and the shared row max.
import {
  add,
  bitAnd,
  call,
  cast,
  div,
  eq,
  exp2Approx,
  fenceProxyAsyncShared,
  float32,
  index,
  infinity,
  int32,
  lit,
  mbarrierArrive,
  mbarrierWaitParity,
  mul,
  opaqueValue,
  packFloat2,
  pointer,
  select,
  sub,
  uint32,
  uint64,
  uint8,
  voidType,
  type BlockBuilder,
  type Expr,
} from '@tilekit/codegen';
import { emitCalculateOffset } from '@tilekit/layout';
import { sweepTile, type DistributedTensor, type RegisterArray, type ThreadScope } from '@tilekit/tile';
import { dsaSparseMlaAddr, dsaSparseMlaStage, type DsaSparseMlaCta } from './dsaSparseMlaCta.ts';
import { DSA_SPARSE_MLA_CHAIN_PEER_PV, DSA_SPARSE_MLA_CHAIN_PV, DSA_SPARSE_MLA_CHAIN_QK } from './dsaSparseMlaChainGemms.ts';
import {
  DSA_SPARSE_MLA_CHAIN_HALVES,
  DSA_SPARSE_MLA_CHAIN_KEYS,
  DSA_SPARSE_MLA_CHAIN_SLAB_BYTES,
  type DsaSparseMlaChainSmem,
} from './dsaSparseMlaChainSmem.ts';
import { DSA_SPARSE_MLA_Q_SLAB_BYTES } from './dsaSparseMlaSmem.ts';
import { dsaSparseMlaChainStage } from './emitDsaSparseMlaChainProducer.ts';
import { dsaSparseMlaRowWriter, dsaSparseMlaWarpgroupThreads, type DsaSparseMlaEpilogueState } from './dsaSparseMlaEpilogueState.ts';

/**
 * The hand-offs between the two warpgroups, each an mbarrier that the 128 threads of the signalling warpgroup arrive
 * on once per pair (each releasing its own shared-memory writes) and the other warpgroup waits on with the pair's
 * parity: the leader's max, the follower's max, the leader's P, the follower's P. Neither side gets a pair ahead of
 * the other, so a phase is never completed twice before it is waited for.
 */
export const DSA_CHAIN_SIGNAL = Object.freeze({ leaderMax: 0, followerMax: 1, leaderP: 2, followerP: 3 });

/** `uint64*` of hand-off barrier `signal`, opaque (four hoisted 64-bit pointers cost the consumers a spill). */
function handoff(b: BlockBuilder, cta: DsaSparseMlaCta, signal: number): Expr {
  const at = cast(add(cta.smem, (cta.layout as DsaSparseMlaChainSmem).handoffs + 8 * signal), pointer(uint64));
  return opaqueValue(b, 'handoff', pointer(uint64), at);
}

/** This thread's arrival on hand-off `signal` (after its writes the other warpgroup reads). */
export function emitSignal(b: BlockBuilder, cta: DsaSparseMlaCta, signal: number): void {
  b.expr(mbarrierArrive(cta.target, handoff(b, cta, signal)));
}

/** Waits for the other warpgroup's hand-off `signal` of the pair (`pair` an `int`). */
export function emitAwaitSignal(b: BlockBuilder, cta: DsaSparseMlaCta, signal: number, pair: Expr): void {
  b.expr(mbarrierWaitParity(cta.target, handoff(b, cta, signal), cast(bitAnd(pair, 1), uint32)));
}

/** A warpgroup of the chained schedule: the epilogue's state, S, its packed P and the softmax scale. */
export interface DsaSparseMlaChainState extends DsaSparseMlaEpilogueState {
  readonly sAcc: DistributedTensor;
  readonly pOwn: RegisterArray;
  /** `float` sm_scale · log2 e and its inverse. */
  readonly scaleLog2: Expr;
  readonly invScaleLog2: Expr;
}

/**
 * The shared address of a tile at byte `offset`, hidden from the optimizer: every block GEMM of the schedule reads
 * fixed tiles, and their wgmma descriptors, once hoisted out of the pair loop, would hold ~150 registers for the loop.
 */
export function chainTileAddr(b: BlockBuilder, cta: DsaSparseMlaCta, offset: Expr | number): Expr {
  return opaqueValue(b, 'tile_addr', uint32, dsaSparseMlaAddr(cta, offset));
}

/** Waits until buffer `buf`'s half `half` of the pair is in (`parity`: the pair's), then fences it for wgmma. */
export function emitAwaitHalf(b: BlockBuilder, cta: DsaSparseMlaCta, buf: number, half: number, parity: Expr): void {
  b.expr(mbarrierWaitParity(cta.target, cta.full(dsaSparseMlaChainStage(buf, half)), parity));
  b.expr(fenceProxyAsyncShared(cta.target));
}

/** Releases buffer `buf`'s half `half` (this thread's reads of it are done). */
export function emitReleaseHalf(b: BlockBuilder, cta: DsaSparseMlaCta, buf: number, half: number): void {
  b.expr(mbarrierArrive(cta.target, cta.empty(dsaSparseMlaChainStage(buf, half))));
}

/** Issues S (+)= Q·Kᵀ over the slabs of half `half` of buffer `buf` as one commit group; `start` begins S. */
export function emitQkHalf(
  b: BlockBuilder,
  cta: DsaSparseMlaCta,
  st: DsaSparseMlaChainState,
  buf: number,
  half: number,
  start: boolean,
): void {
  const [s0, s1] = DSA_SPARSE_MLA_CHAIN_HALVES[half]!;
  for (let c = s0; c < s1; c++) {
    DSA_SPARSE_MLA_CHAIN_QK.emitMma(b, cta.target, st.sAcc, {
      aTile: chainTileAddr(b, cta, add(cta.layout.q, c * DSA_SPARSE_MLA_Q_SLAB_BYTES)),
      bTile: chainTileAddr(b, cta, add(dsaSparseMlaStage(cta, buf), c * DSA_SPARSE_MLA_CHAIN_SLAB_BYTES)),
      warpgroup: cast(0, int32),
      batch: c === s0 ? 'open' : c === s1 - 1 ? 'continue' : 'inner',
      ...(start && c === s0 ? { accumulate: cast(0, int32) } : {}),
    });
  }
}

/** Q·Kᵀ of buffer `buf` over its halves in `order` (each awaited before its slabs; the first starts S), waited for. */
export function emitScoreBuffer(
  b: BlockBuilder,
  cta: DsaSparseMlaCta,
  st: DsaSparseMlaChainState,
  buf: number,
  order: readonly [number, number],
  parity: Expr,
): void {
  order.forEach((half, i) => {
    emitAwaitHalf(b, cta, buf, half, parity);
    emitQkHalf(b, cta, st, buf, half, i === 0);
  });
  DSA_SPARSE_MLA_CHAIN_QK.emitWait(b, cta.target, st.sAcc, 0);
}

/** S = −∞ where buffer `buf`'s validity byte of the token is 0. */
export function emitMask(b: BlockBuilder, cta: DsaSparseMlaCta, st: DsaSparseMlaChainState, buf: number): void {
  const valid = b.let('tile_valid', pointer(uint8, { const: true }), add(cta.smem, cta.layout.valid + buf * DSA_SPARSE_MLA_CHAIN_KEYS));
  dsaSparseMlaWarpgroupThreads(b, cta, st).threads((th) =>
    sweepTile(th, st.sAcc, (e) => e.b.if(eq(index(valid, e.x[1]!), 0), (z) => z.assign(e.value, infinity(float32, { negative: true })))),
  );
}

/** pOwn = S packed to bf16 pairs (the register A of P·V). */
export function emitPackP(t: ThreadScope, cta: DsaSparseMlaCta, st: DsaSparseMlaChainState): void {
  for (let r = 0; r < DSA_SPARSE_MLA_CHAIN_PV.aRegisters; r++)
    t.b.assign(st.pOwn.at(t, r), packFloat2(cta.target, 'bf16', st.sAcc.at(t, 2 * r), st.sAcc.at(t, 2 * r + 1)));
}

/** Writes pOwn to the K-major P layout at byte `offset` of shared memory (the other warpgroup's A of P·V). */
export function emitStoreP(t: ThreadScope, cta: DsaSparseMlaCta, st: DsaSparseMlaChainState, offset: Expr | number): void {
  const words = t.b.let('p_words', pointer(uint32), cast(add(cta.smem, offset), pointer(uint32)));
  sweepTile(t, st.sAcc, (e) => {
    if (e.d % 2 !== 0) return;
    const at = emitCalculateOffset(e.b, DSA_SPARSE_MLA_CHAIN_PEER_PV.aLayout.descriptor, [e.x[0]!, e.x[1]!], st.block.indexEmitter);
    e.b.assign(index(words, div(at.offset, 2)), st.pOwn.at(t, e.d / 2));
  });
}

/** `float*` of the shared row max. */
function rowMaxBuf(t: ThreadScope, cta: DsaSparseMlaCta): Expr {
  return t.b.let('row_max_buf', pointer(float32), cast(add(cta.smem, cta.layout.rowMax), pointer(float32)));
}

/** The row writers publish the running max m (after `__syncwarp`: every lane of the row has read the old value). */
export function emitPublishMax(t: ThreadScope, cta: DsaSparseMlaCta, st: DsaSparseMlaChainState): void {
  const buf = rowMaxBuf(t, cta);
  t.b.expr(call('__syncwarp', [], voidType));
  sweepTile(t, st.softmax.m, (e) => e.b.if(dsaSparseMlaRowWriter(st), (w) => w.assign(index(buf, e.x[0]!), e.value)));
}

/** The hook of the follower's softmax update: each raw tile row max raised to the leader's published running max. */
export function raiseToPublishedMax(cta: DsaSparseMlaCta, st: DsaSparseMlaChainState) {
  return (t: ThreadScope, rowMax: readonly Expr[]): void => {
    const buf = rowMaxBuf(t, cta);
    sweepTile(t, st.softmax.m, (e) => {
      const raised = mul(index(buf, e.x[0]!), st.invScaleLog2);
      e.b.assign(rowMax[e.d]!, call('fmaxf', [rowMax[e.d]!, raised], float32));
    });
  };
}

/**
 * The leader adopts the follower's running max m': `factor` (a row tensor) = 2^(m − m') per row (1 where m' = −∞:
 * nothing valid yet), then m = m'.
 */
export function emitAdoptPublishedMax(t: ThreadScope, cta: DsaSparseMlaCta, st: DsaSparseMlaChainState, factor: DistributedTensor): void {
  const buf = rowMaxBuf(t, cta);
  sweepTile(t, st.softmax.m, (e) => {
    const next = e.b.let('m_next', float32, index(buf, e.x[0]!));
    const none = eq(next, infinity(float32, { negative: true }));
    e.b.assign(factor.at(t, e.d), select(none, lit(1, float32), exp2Approx(cta.target, sub(e.value, next))));
    e.b.assign(e.value, next);
  });
}
