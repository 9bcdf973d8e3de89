// The two consumer warpgroups of the sparse MLA kernels (FlashMLA's sm90 schedule, built from the
// layers): per pair of key tiles, warpgroup i scores tile 2p + i (S = Q·Kᵀ in stage i), both share
// the running row max through shared memory (so their P and l add up), each hands its packed P to
// the other through the stage's RoPE slab, and each multiplies both tiles' P by its own 256 of
// V's 512 columns (O split along d_v).
import {
  add,
  bool,
  cast,
  div,
  eq,
  float32,
  index,
  infinity,
  int32,
  lt,
  maxOf,
  mbarrierArrive,
  mbarrierWaitParity,
  mul,
  namedBarrierSync,
  packFloat2,
  pointer,
  setMaxNReg,
  sub,
  bitAnd,
  shr,
  uint32,
  uint8,
  type BlockBuilder,
  type Expr,
} from '@tilekit/codegen';
import { BlockOnlineSoftmax } from '@tilekit/fmha';
import {
  BlockEmitter,
  clearTile,
  makeDistributedTensor,
  sweepTile,
  type DistributedTensor,
  type RegisterArray,
  type ThreadScope,
} from '@tilekit/tile';
import { dsaSparseMlaAddr, dsaSparseMlaStage, type DsaSparseMlaCta } from './dsaSparseMlaCta.ts';
import { DSA_SPARSE_MLA_PV, DSA_SPARSE_MLA_QK, DSA_SPARSE_MLA_V_HALF } from './dsaSparseMlaGemms.ts';
import {
  DSA_SPARSE_MLA_HEAD_BLOCK,
  DSA_SPARSE_MLA_K_SLAB_BYTES,
  DSA_SPARSE_MLA_KEYS,
  DSA_SPARSE_MLA_Q_SLAB_BYTES,
  DSA_SPARSE_MLA_SLABS,
} from './dsaSparseMlaSmem.ts';
import {
  dsaSparseMlaRowWriter,
  dsaSparseMlaWarpgroupThreads,
  type DsaSparseMlaEpilogue,
  type DsaSparseMlaEpilogueState,
} from './dsaSparseMlaEpilogueState.ts';
import { emitDsaSparseMlaEpilogue } from './emitDsaSparseMlaEpilogue.ts';

/** Named barriers of the two consumer warpgroups (0 is __syncthreads). */
const BAR_MAX = 1;
const BAR_P = 2;
const CONSUMERS = 256;

/** A consumer warpgroup's registers and softmax state. */
export interface DsaSparseMlaConsumerState extends DsaSparseMlaEpilogueState {
  readonly sAcc: DistributedTensor;
  readonly pOwn: RegisterArray;
  readonly pPeer: RegisterArray;
}

/** The shared max: each warpgroup publishes its tile row maxima, then takes the larger of both. */
function exchangeRowMax(cta: DsaSparseMlaCta, state: DsaSparseMlaConsumerState, t: ThreadScope, rowMax: readonly Expr[]): void {
  const buf = t.b.let('row_max_buf', pointer(float32), cast(add(cta.smem, cta.layout.rowMax), pointer(float32)));
  sweepTile(t, state.softmax.m, (e) =>
    e.b.if(dsaSparseMlaRowWriter(state), (w) => w.assign(index(buf, add(mul(state.wg, DSA_SPARSE_MLA_HEAD_BLOCK), e.x[0]!)), rowMax[e.d]!)),
  );
  t.b.expr(namedBarrierSync(cta.target, BAR_MAX, CONSUMERS));
  sweepTile(t, state.softmax.m, (e) =>
    e.b.assign(rowMax[e.d]!, maxOf(rowMax[e.d]!, index(buf, add(mul(sub(1, state.wg), DSA_SPARSE_MLA_HEAD_BLOCK), e.x[0]!)))),
  );
}

/** S = Q·Kᵀ of the warpgroup's tile in `stage` (nine slabs), then −∞ where the token's index is invalid. */
function emitScores(b: BlockBuilder, cta: DsaSparseMlaCta, state: DsaSparseMlaConsumerState, stage: Expr, parity: Expr): void {
  const t = cta.target;
  b.expr(mbarrierWaitParity(t, cta.full(stage), parity));
  const q = b.let('q_tile', uint32, dsaSparseMlaAddr(cta, cta.layout.q));
  const k = b.let('k_tile', uint32, dsaSparseMlaAddr(cta, dsaSparseMlaStage(cta, stage)));
  for (let c = 0; c < DSA_SPARSE_MLA_SLABS; c++) {
    DSA_SPARSE_MLA_QK.emitMma(b, t, state.sAcc, {
      aTile: add(q, c * DSA_SPARSE_MLA_Q_SLAB_BYTES),
      bTile: add(k, c * DSA_SPARSE_MLA_K_SLAB_BYTES),
      warpgroup: cast(0, int32),
      ...(c === 0 ? { accumulate: cast(0, int32) } : {}),
    });
  }
  DSA_SPARSE_MLA_QK.emitWait(b, t, state.sAcc, 0);
  const valid = b.let('tile_valid', pointer(uint8, { const: true }), add(cta.smem, add(cta.layout.valid, mul(stage, DSA_SPARSE_MLA_KEYS))));
  dsaSparseMlaWarpgroupThreads(b, cta, state).threads((th) =>
    sweepTile(th, state.sAcc, (e) => e.b.if(eq(index(valid, e.x[1]!), 0), (z) => z.assign(e.value, infinity(float32, { negative: true })))),
  );
}

/** Fills S with −∞ (a warpgroup without a tile in the last pair still takes part in the shared max). */
function emitNoScores(t: ThreadScope, state: DsaSparseMlaConsumerState): void {
  sweepTile(t, state.sAcc, (e) => e.b.assign(e.value, infinity(float32, { negative: true })));
}

/** `uint32*` of the P fragments in stage `s`'s RoPE slab: word r of thread t at r · 128 + t. */
function pWords(b: BlockBuilder, cta: DsaSparseMlaCta, s: Expr, name: string): Expr {
  const rope = add(dsaSparseMlaStage(cta, s), (DSA_SPARSE_MLA_SLABS - 1) * DSA_SPARSE_MLA_K_SLAB_BYTES);
  return b.let(name, pointer(uint32), cast(add(cta.smem, rope), pointer(uint32)));
}

/**
 * The softmax of the pair with the shared max (S becomes P), O's rescale, P packed to bf16 pairs
 * and, when the warpgroup scored a tile, published in its stage's RoPE slab for the other warpgroup.
 */
function emitSoftmaxAndPublish(b: BlockBuilder, cta: DsaSparseMlaCta, state: DsaSparseMlaConsumerState, stage: Expr, mine: Expr): void {
  const scaleLog2 = b.let('scale_log2', float32, mul(cta.args.smScale, Math.LOG2E));
  const own = pWords(b, cta, stage, 'p_own_words');
  dsaSparseMlaWarpgroupThreads(b, cta, state).threads((th) => {
    const exchange = (t: ThreadScope, rowMax: readonly Expr[]): void => exchangeRowMax(cta, state, t, rowMax);
    const corr = state.softmax.emitUpdate(th, state.sAcc, scaleLog2, { exchangeRowMax: exchange })!;
    state.softmax.emitRescale(th, state.oAcc, corr);
    for (let r = 0; r < DSA_SPARSE_MLA_PV.aRegisters; r++)
      th.b.assign(state.pOwn.at(th, r), packFloat2(cta.target, 'bf16', state.sAcc.at(th, 2 * r), state.sAcc.at(th, 2 * r + 1)));
    th.b.if(mine, (x) => {
      for (let r = 0; r < DSA_SPARSE_MLA_PV.aRegisters; r++)
        x.assign(index(own, add(r * 128, state.wtid)), state.pOwn.at({ ...th, b: x }, r));
    });
  });
}

/**
 * O_half += P·V of the own tile (P in registers) and of the other warpgroup's (its P read from its
 * stage into registers first), where they exist: both issued back to back, then one wait.
 */
function emitPv(b: BlockBuilder, cta: DsaSparseMlaCta, state: DsaSparseMlaConsumerState, stages: PairStages): void {
  const t = cta.target;
  const half = mul(state.wg, 4 * DSA_SPARSE_MLA_K_SLAB_BYTES);
  const vOf = (x: BlockBuilder, s: Expr, name: string): Expr =>
    x.let(name, uint32, dsaSparseMlaAddr(cta, add(dsaSparseMlaStage(cta, s), half)));
  b.if(stages.theirs, (x) => {
    const words = pWords(x, cta, stages.other, 'p_peer_words');
    dsaSparseMlaWarpgroupThreads(x, cta, state).threads((th) => {
      for (let r = 0; r < DSA_SPARSE_MLA_PV.aRegisters; r++) th.b.assign(state.pPeer.at(th, r), index(words, add(r * 128, state.wtid)));
    });
  });
  b.if(stages.mine, (x) => DSA_SPARSE_MLA_PV.emitMma(x, t, state.oAcc, state.pOwn, { bTile: vOf(x, stages.own, 'v_own') }));
  b.if(stages.theirs, (x) => DSA_SPARSE_MLA_PV.emitMma(x, t, state.oAcc, state.pPeer, { bTile: vOf(x, stages.other, 'v_peer') }));
  DSA_SPARSE_MLA_PV.emitWait(b, t, state.oAcc, 0, state.pOwn);
  DSA_SPARSE_MLA_PV.emitWait(b, t, state.oAcc, 0, state.pPeer);
}

/** The stages of a pair for the calling warpgroup: its own tile's and the other warpgroup's, and whether each holds a tile. */
interface PairStages {
  readonly own: Expr;
  readonly other: Expr;
  readonly mine: Expr;
  readonly theirs: Expr;
}

/** One pair of key tiles (2p, 2p + 1) in stages 2·(p mod 2) + {0, 1} for the calling warpgroup. */
function emitPair(l: BlockBuilder, cta: DsaSparseMlaCta, state: DsaSparseMlaConsumerState, pair: Expr): void {
  const has = (i: Expr, name: string): Expr => l.let(name, bool, lt(add(mul(pair, 2), i), cta.tiles));
  const base = l.let('pair_stage', int32, mul(bitAnd(pair, 1), 2));
  const stages: PairStages = {
    own: l.let('own_stage', int32, add(base, state.wg)),
    other: l.let('other_stage', int32, add(base, sub(1, state.wg))),
    mine: has(state.wg, 'has_mine'),
    theirs: has(sub(1, state.wg), 'has_theirs'),
  };
  const parity = l.let('parity', uint32, cast(bitAnd(shr(pair, 1), 1), uint32));
  l.if(
    stages.mine,
    (x) => emitScores(x, cta, state, stages.own, parity),
    (x) => dsaSparseMlaWarpgroupThreads(x, cta, state).threads((th) => emitNoScores(th, state)),
  );
  emitSoftmaxAndPublish(l, cta, state, stages.own, stages.mine);
  l.expr(namedBarrierSync(cta.target, BAR_P, CONSUMERS));
  emitPv(l, cta, state, stages);
  l.comment(
    'both stages are read by both warpgroups: every consumer thread releases each stage that held a tile (its own reads precede its arrive)',
  );
  for (const s of [0, 1]) l.if(lt(add(mul(pair, 2), s), cta.tiles), (x) => x.expr(mbarrierArrive(cta.target, cta.empty(add(base, s)))));
}

/**
 * Emits both consumer warpgroups (threads [0, 256), `registers` after setmaxnreg): their state, the
 * loop over pairs of key tiles, and `epilogue` (default emitDsaSparseMlaEpilogue: row sums joined,
 * O /= l, the sink, O, LSE and max logits out).
 */
export function emitDsaSparseMlaConsumers(
  b: BlockBuilder,
  cta: DsaSparseMlaCta,
  registers: number,
  epilogue: DsaSparseMlaEpilogue = emitDsaSparseMlaEpilogue,
): void {
  const t = cta.target;
  b.comment(`two consumer warpgroups: registers up to ${registers}; warpgroup i scores stage i and owns V columns [256i, 256i + 256)`);
  b.expr(setMaxNReg(t, 'inc', registers));
  const wg = b.let('wg', int32, div(cta.tid, 128));
  const wtid = b.let('wg_tid', int32, bitAnd(cta.tid, 127), { range: [0, 127] });
  const block = new BlockEmitter(b, t, { numThreads: 128, tid: wtid });
  const state: DsaSparseMlaConsumerState = {
    block,
    wg,
    wtid,
    sAcc: makeDistributedTensor(block, 's_acc', DSA_SPARSE_MLA_QK.cEncoding, float32),
    oAcc: makeDistributedTensor(block, 'o_acc', DSA_SPARSE_MLA_PV.cEncoding, float32),
    pOwn: block.registers('p_own', uint32, DSA_SPARSE_MLA_PV.aRegisters),
    pPeer: block.registers('p_peer', uint32, DSA_SPARSE_MLA_PV.aRegisters),
    softmax: new BlockOnlineSoftmax(block, DSA_SPARSE_MLA_QK.cEncoding),
  };
  block.threads((th) => {
    state.softmax.emitInit(th);
    clearTile(th, state.oAcc);
  });
  const pairs = b.let('pairs', int32, div(add(cta.tiles, 1), 2));
  b.forRange({ name: 'pair', to: pairs }, (l, pair) => emitPair(l, cta, state, pair));
  epilogue(b, cta, state, { columns: DSA_SPARSE_MLA_V_HALF, rowWriter: dsaSparseMlaRowWriter(state) });
}
