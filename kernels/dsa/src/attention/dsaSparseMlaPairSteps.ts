// The steps a sparse MLA consumer warpgroup runs per pair of key tiles (its own tile and the other
// warpgroup's): issue S = Q·Kᵀ, finish it (wait, invalid tokens to −∞), the softmax with the shared
// row max and P's publication, both P·V, and the stages' release. emitDsaSparseMlaConsumers
// schedules them so that the next pair's Q·Kᵀ runs behind this pair's P·V.
import {
  add,
  bitAnd,
  bool,
  cast,
  eq,
  float32,
  index,
  infinity,
  int32,
  lt,
  maxOf,
  mbarrierArriveWarp,
  mbarrierWaitParity,
  mul,
  namedBarrierSync,
  packFloat2,
  pointer,
  shr,
  sub,
  uint32,
  uint8,
  type BlockBuilder,
  type Expr,
} from '@tilekit/codegen';
import type { BlockOnlineSoftmax } from '@tilekit/fmha';
import { BlockEmitter, sweepTile, type DistributedTensor, type RegisterArray, type ThreadScope } from '@tilekit/tile';
import { dsaSparseMlaAddr, dsaSparseMlaStage, type DsaSparseMlaCta } from './dsaSparseMlaCta.ts';
import { DSA_SPARSE_MLA_PV, DSA_SPARSE_MLA_QK } from './dsaSparseMlaGemms.ts';
import {
  DSA_SPARSE_MLA_HEAD_BLOCK,
  DSA_SPARSE_MLA_K_SLAB_BYTES,
  DSA_SPARSE_MLA_KEYS,
  DSA_SPARSE_MLA_Q_SLAB_BYTES,
  DSA_SPARSE_MLA_SLABS,
} from './dsaSparseMlaSmem.ts';

/** Named barriers of the two consumer warpgroups (0 is __syncthreads). */
const BAR_MAX = 1;
const BAR_P = 2;
/** Threads of both consumer warpgroups. */
export const DSA_SPARSE_MLA_CONSUMER_THREADS = 256;

/** A consumer warpgroup's registers and softmax state. */
export interface DsaSparseMlaConsumerState {
  readonly block: BlockEmitter;
  /** `int` warpgroup (0 scores the even tiles, 1 the odd ones; it owns V columns [256·wg, +256)) and thread within it. */
  readonly wg: Expr;
  readonly wtid: Expr;
  /** Two S accumulators: the pair's and the next pair's (issued behind this pair's P·V). */
  readonly sAcc: readonly [DistributedTensor, DistributedTensor];
  readonly oAcc: DistributedTensor;
  readonly pOwn: RegisterArray;
  readonly pPeer: RegisterArray;
  readonly softmax: BlockOnlineSoftmax;
}

/** Pair p's stages for the calling warpgroup (its own tile's and the other warpgroup's) and whether each holds a tile. */
export interface DsaSparseMlaPairStages {
  readonly pair: Expr;
  readonly own: Expr;
  readonly other: Expr;
  readonly mine: Expr;
  readonly theirs: Expr;
  /** `uint32` parity of the pair's full barriers (round p / 2 of its stages). */
  readonly parity: Expr;
}

/** Declares pair `pair`'s stages (2·(p mod 2) + {0, 1}) for the calling warpgroup. */
export function dsaSparseMlaPairStages(
  l: BlockBuilder,
  cta: DsaSparseMlaCta,
  state: DsaSparseMlaConsumerState,
  pair: Expr,
): DsaSparseMlaPairStages {
  const has = (i: Expr, name: string): Expr => l.let(name, bool, lt(add(mul(pair, 2), i), cta.tiles));
  const base = l.let('pair_stage', int32, mul(bitAnd(pair, 1), 2));
  return {
    pair,
    own: l.let('own_stage', int32, add(base, state.wg)),
    other: l.let('other_stage', int32, add(base, sub(1, state.wg))),
    mine: has(state.wg, 'has_mine'),
    theirs: has(sub(1, state.wg), 'has_theirs'),
    parity: l.let('parity', uint32, cast(bitAnd(shr(pair, 1), 1), uint32)),
  };
}

/** The warpgroup's threads on `b` (nested in its block emitter). */
function threadsOf(b: BlockBuilder, cta: DsaSparseMlaCta, state: DsaSparseMlaConsumerState): BlockEmitter {
  return new BlockEmitter(b, cta.target, { numThreads: 128, tid: state.wtid }, state.block);
}

/** The lanes of a row whose replica bits are 0 write its shared values. */
export function dsaSparseMlaRowWriter(state: DsaSparseMlaConsumerState): Expr {
  return eq(
    bitAnd(
      state.wtid,
      state.softmax.laneMasks.reduce((a, m) => a | m, 0),
    ),
    0,
  );
}

/** Waits for the tile in `p.own` and issues S = Q·Kᵀ over its nine slabs into `s` (committed, not waited), where the warpgroup has a tile. */
export function emitDsaSparseMlaIssueScores(b: BlockBuilder, cta: DsaSparseMlaCta, p: DsaSparseMlaPairStages, s: DistributedTensor): void {
  const t = cta.target;
  b.if(p.mine, (x) => {
    x.expr(mbarrierWaitParity(t, cta.full(p.own), p.parity));
    const q = x.let('q_tile', uint32, dsaSparseMlaAddr(cta, cta.layout.q));
    const k = x.let('k_tile', uint32, dsaSparseMlaAddr(cta, dsaSparseMlaStage(cta, p.own)));
    for (let c = 0; c < DSA_SPARSE_MLA_SLABS; c++) {
      DSA_SPARSE_MLA_QK.emitMma(x, t, s, {
        aTile: add(q, c * DSA_SPARSE_MLA_Q_SLAB_BYTES),
        bTile: add(k, c * DSA_SPARSE_MLA_K_SLAB_BYTES),
        warpgroup: cast(0, int32),
        ...(c === 0 ? { accumulate: cast(0, int32) } : {}),
      });
    }
  });
}

/** S complete (every wgmma of the warpgroup waited) with −∞ for invalid tokens; all −∞ where the warpgroup has no tile in the pair. */
export function emitDsaSparseMlaFinishScores(
  b: BlockBuilder,
  cta: DsaSparseMlaCta,
  state: DsaSparseMlaConsumerState,
  p: DsaSparseMlaPairStages,
  s: DistributedTensor,
): void {
  const negInf = infinity(float32, { negative: true });
  DSA_SPARSE_MLA_QK.emitWait(b, cta.target, s, 0);
  b.if(
    p.mine,
    (x) => {
      const valid = x.let(
        'tile_valid',
        pointer(uint8, { const: true }),
        add(cta.smem, add(cta.layout.valid, mul(p.own, DSA_SPARSE_MLA_KEYS))),
      );
      threadsOf(x, cta, state).threads((th) =>
        sweepTile(th, s, (e) => e.b.if(eq(index(valid, e.x[1]!), 0), (z) => z.assign(e.value, negInf))),
      );
    },
    (x) => threadsOf(x, cta, state).threads((th) => sweepTile(th, s, (e) => e.b.assign(e.value, negInf))),
  );
}

/** The shared max: each warpgroup publishes its tile row maxima, then takes the larger of both. */
function exchangeRowMax(cta: DsaSparseMlaCta, state: DsaSparseMlaConsumerState, t: ThreadScope, rowMax: readonly Expr[]): void {
  const buf = t.b.let('row_max_buf', pointer(float32), cast(add(cta.smem, cta.layout.rowMax), pointer(float32)));
  const at = (wg: Expr, row: Expr): Expr => index(buf, add(mul(wg, DSA_SPARSE_MLA_HEAD_BLOCK), row));
  sweepTile(t, state.softmax.m, (e) => e.b.if(dsaSparseMlaRowWriter(state), (w) => w.assign(at(state.wg, e.x[0]!), rowMax[e.d]!)));
  t.b.expr(namedBarrierSync(cta.target, BAR_MAX, DSA_SPARSE_MLA_CONSUMER_THREADS));
  sweepTile(t, state.softmax.m, (e) => e.b.assign(rowMax[e.d]!, maxOf(rowMax[e.d]!, at(sub(1, state.wg), e.x[0]!))));
}

/** `uint32*` of the P fragments in stage `s`'s RoPE slab: word r of thread t at r · 128 + t. */
function pWords(b: BlockBuilder, cta: DsaSparseMlaCta, s: Expr, name: string): Expr {
  const rope = add(dsaSparseMlaStage(cta, s), (DSA_SPARSE_MLA_SLABS - 1) * DSA_SPARSE_MLA_K_SLAB_BYTES);
  return b.let(name, pointer(uint32), cast(add(cta.smem, rope), pointer(uint32)));
}

/**
 * The softmax of the pair with the shared max (S becomes P), O's rescale, P packed to bf16 pairs
 * and, where the warpgroup scored a tile, published in its stage's RoPE slab; then the barrier after
 * which both warpgroups' P are there.
 */
export function emitDsaSparseMlaSoftmax(
  b: BlockBuilder,
  cta: DsaSparseMlaCta,
  state: DsaSparseMlaConsumerState,
  p: DsaSparseMlaPairStages,
  s: DistributedTensor,
): void {
  const scaleLog2 = b.let('scale_log2', float32, mul(cta.args.smScale, Math.LOG2E));
  const own = pWords(b, cta, p.own, 'p_own_words');
  threadsOf(b, cta, state).threads((th) => {
    const exchange = (t: ThreadScope, rowMax: readonly Expr[]): void => exchangeRowMax(cta, state, t, rowMax);
    const corr = state.softmax.emitUpdate(th, s, scaleLog2, { exchangeRowMax: exchange })!;
    state.softmax.emitRescale(th, state.oAcc, corr);
    for (let r = 0; r < DSA_SPARSE_MLA_PV.aRegisters; r++)
      th.b.assign(state.pOwn.at(th, r), packFloat2(cta.target, 'bf16', s.at(th, 2 * r), s.at(th, 2 * r + 1)));
    th.b.if(p.mine, (x) => {
      for (let r = 0; r < DSA_SPARSE_MLA_PV.aRegisters; r++)
        x.assign(index(own, add(r * 128, state.wtid)), state.pOwn.at({ ...th, b: x }, r));
    });
  });
  b.expr(namedBarrierSync(cta.target, BAR_P, DSA_SPARSE_MLA_CONSUMER_THREADS));
}

/** Issues O_half += P·V of the own tile (P in registers) and of the other warpgroup's (its P read from its stage first), where they exist. */
export function emitDsaSparseMlaIssuePv(
  b: BlockBuilder,
  cta: DsaSparseMlaCta,
  state: DsaSparseMlaConsumerState,
  p: DsaSparseMlaPairStages,
): void {
  const t = cta.target;
  const half = mul(state.wg, 4 * DSA_SPARSE_MLA_K_SLAB_BYTES);
  const vOf = (x: BlockBuilder, s: Expr, name: string): Expr =>
    x.let(name, uint32, dsaSparseMlaAddr(cta, add(dsaSparseMlaStage(cta, s), half)));
  b.if(p.theirs, (x) => {
    const words = pWords(x, cta, p.other, 'p_peer_words');
    threadsOf(x, cta, state).threads((th) => {
      for (let r = 0; r < DSA_SPARSE_MLA_PV.aRegisters; r++) th.b.assign(state.pPeer.at(th, r), index(words, add(r * 128, state.wtid)));
    });
  });
  b.if(p.mine, (x) => DSA_SPARSE_MLA_PV.emitMma(x, t, state.oAcc, state.pOwn, { bTile: vOf(x, p.own, 'v_own') }));
  b.if(p.theirs, (x) => DSA_SPARSE_MLA_PV.emitMma(x, t, state.oAcc, state.pPeer, { bTile: vOf(x, p.other, 'v_peer') }));
}

/** Waits for the P·V (at most `pending` newer wgmma groups left in flight) and releases the pair's stages: both warpgroups read both. */
export function emitDsaSparseMlaFinishPv(
  b: BlockBuilder,
  cta: DsaSparseMlaCta,
  state: DsaSparseMlaConsumerState,
  p: DsaSparseMlaPairStages,
  pending: number,
): void {
  DSA_SPARSE_MLA_PV.emitWait(b, cta.target, state.oAcc, pending, state.pOwn);
  DSA_SPARSE_MLA_PV.emitWait(b, cta.target, state.oAcc, pending, state.pPeer);
  const base = sub(p.own, state.wg);
  for (const s of [0, 1])
    b.if(lt(add(mul(p.pair, 2), s), cta.tiles), (x) => x.expr(mbarrierArriveWarp(cta.target, cta.empty(add(base, s)))));
}
