// The two consumer warpgroups of the sparse MLA kernels (FlashMLA's sm90 schedule, built from the
// layers): per pair of key tiles, warpgroup i scores tile 2p + i (S = Q·Kᵀ in its stage), both share
// the running row max through shared memory (so their P and l add up), each hands its packed P to
// the other through the stage's RoPE slab, and each multiplies both tiles' P by its own 256 of
// V's 512 columns (O split along d_v). The next pair's Q·Kᵀ is issued behind this pair's P·V.
import { add, bitAnd, div, float32, gt, int32, lt, setMaxNReg, uint32, type BlockBuilder, type Expr } from '@tilekit/codegen';
import { BlockOnlineSoftmax } from '@tilekit/fmha';
import { BlockEmitter, clearTile, makeDistributedTensor, type DistributedTensor } from '@tilekit/tile';
import type { DsaSparseMlaCta } from './dsaSparseMlaCta.ts';
import { DSA_SPARSE_MLA_PV, DSA_SPARSE_MLA_QK, DSA_SPARSE_MLA_V_HALF } from './dsaSparseMlaGemms.ts';
import {
  dsaSparseMlaPairStages,
  dsaSparseMlaRowWriter,
  emitDsaSparseMlaFinishPv,
  emitDsaSparseMlaFinishScores,
  emitDsaSparseMlaIssuePv,
  emitDsaSparseMlaIssueScores,
  emitDsaSparseMlaSoftmax,
  type DsaSparseMlaConsumerState,
} from './dsaSparseMlaPairSteps.ts';
import { emitDsaSparseMlaEpilogue } from './emitDsaSparseMlaEpilogue.ts';

/**
 * One pair with its S in `cur`: finish S, the softmax and P's exchange, issue both P·V, then issue
 * the next pair's Q·Kᵀ into `next` (where it exists) and wait for the P·V only.
 */
function emitPair(
  l: BlockBuilder,
  cta: DsaSparseMlaCta,
  state: DsaSparseMlaConsumerState,
  pair: Expr,
  cur: DistributedTensor,
  next: DistributedTensor,
): void {
  const p = dsaSparseMlaPairStages(l, cta, state, pair);
  emitDsaSparseMlaFinishScores(l, cta, state, p, cur);
  emitDsaSparseMlaSoftmax(l, cta, state, p, cur);
  emitDsaSparseMlaIssuePv(l, cta, state, p);
  const following = l.let('next_pair', int32, add(pair, 1));
  const n = dsaSparseMlaPairStages(l, cta, state, following);
  emitDsaSparseMlaIssueScores(l, cta, n, next);
  l.if(
    n.mine,
    (x) => emitDsaSparseMlaFinishPv(x, cta, state, p, 1),
    (x) => emitDsaSparseMlaFinishPv(x, cta, state, p, 0),
  );
}

/**
 * Emits both consumer warpgroups (threads [0, 256), `registers` after setmaxnreg): their state, the
 * first pair's Q·Kᵀ, the loop over pairs (two per iteration, the S accumulators swapping roles),
 * and the epilogue (row sums joined, O /= l, the sink, O, LSE and max logits out).
 */
export function emitDsaSparseMlaConsumers(b: BlockBuilder, cta: DsaSparseMlaCta, registers: number): void {
  const t = cta.target;
  b.comment(
    `two consumer warpgroups: registers up to ${registers}; warpgroup i scores the even (i = 0) or odd tiles and owns V columns [256i, 256i + 256)`,
  );
  b.expr(setMaxNReg(t, 'inc', registers));
  const wg = b.let('wg', int32, div(cta.tid, 128));
  const wtid = b.let('wg_tid', int32, bitAnd(cta.tid, 127), { range: [0, 127] });
  const block = new BlockEmitter(b, t, { numThreads: 128, tid: wtid });
  const state: DsaSparseMlaConsumerState = {
    block,
    wg,
    wtid,
    sAcc: [
      makeDistributedTensor(block, 's_acc', DSA_SPARSE_MLA_QK.cEncoding, float32),
      makeDistributedTensor(block, 's_next', DSA_SPARSE_MLA_QK.cEncoding, float32),
    ],
    oAcc: makeDistributedTensor(block, 'o_acc', DSA_SPARSE_MLA_PV.cEncoding, float32),
    pOwn: block.registers('p_own', uint32, DSA_SPARSE_MLA_PV.aRegisters),
    pPeer: block.registers('p_peer', uint32, DSA_SPARSE_MLA_PV.aRegisters),
    softmax: new BlockOnlineSoftmax(block, DSA_SPARSE_MLA_QK.cEncoding),
  };
  block.threads((th) => {
    state.softmax.emitInit(th);
    clearTile(th, state.oAcc);
  });
  const [s0, s1] = state.sAcc;
  const pairs = b.let('pairs', int32, div(add(cta.tiles, 1), 2));
  b.if(gt(pairs, 0), (x) => emitDsaSparseMlaIssueScores(x, cta, dsaSparseMlaPairStages(x, cta, state, x.let('first_pair', int32, 0)), s0));
  b.forRange({ name: 'pair', to: pairs, step: 2 }, (l, pair) => {
    emitPair(l, cta, state, pair, s0, s1);
    const odd = l.let('odd_pair', int32, add(pair, 1));
    l.if(lt(odd, pairs), (x) => emitPair(x, cta, state, odd, s1, s0));
  });
  emitDsaSparseMlaEpilogue(b, cta, state, { columns: DSA_SPARSE_MLA_V_HALF, rowWriter: dsaSparseMlaRowWriter(state) });
}
