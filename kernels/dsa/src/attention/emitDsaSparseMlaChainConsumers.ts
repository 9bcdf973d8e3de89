// The two consumer warpgroups of the chained sparse MLA schedule: a leader (even blocks) and a follower (odd blocks)
// whose running max is handed leader → follower → leader once per pair, so neither waits for the other's P before
// its own P·V, then the shared epilogue.
import { BlockOnlineSoftmax } from '@tilekit/fmha';
import { add, bitAnd, div, eq, float32, int32, lit, mul, setMaxNReg, shr, uint32, type BlockBuilder } from '@tilekit/codegen';
import { BlockEmitter, clearTile, makeDistributedTensor } from '@tilekit/tile';
import type { DsaSparseMlaCta } from './dsaSparseMlaCta.ts';
import { DSA_SPARSE_MLA_CHAIN_PV, DSA_SPARSE_MLA_CHAIN_QK } from './dsaSparseMlaChainGemms.ts';
import type { DsaSparseMlaChainState } from './dsaSparseMlaChainSteps.ts';
import { dsaSparseMlaRowWriter, type DsaSparseMlaEpilogue } from './dsaSparseMlaEpilogueState.ts';
import { emitDsaSparseMlaChainFollower } from './emitDsaSparseMlaChainFollower.ts';
import { emitDsaSparseMlaChainLeader } from './emitDsaSparseMlaChainLeader.ts';
import { emitDsaSparseMlaEpilogue } from './emitDsaSparseMlaEpilogue.ts';

/** Declares a warpgroup's state (both warpgroups run the same declarations). */
function makeChainState(b: BlockBuilder, cta: DsaSparseMlaCta): DsaSparseMlaChainState {
  const wg = b.let('wg', int32, div(cta.tid, 128));
  const wtid = b.let('wg_tid', int32, bitAnd(cta.tid, 127), { range: [0, 127] });
  const block = new BlockEmitter(b, cta.target, { numThreads: 128, tid: wtid });
  const scaleLog2 = b.let('scale_log2', float32, mul(cta.args.smScale, Math.LOG2E));
  return {
    block,
    wg,
    wtid,
    sAcc: makeDistributedTensor(block, 's_acc', DSA_SPARSE_MLA_CHAIN_QK.cEncoding, float32),
    oAcc: makeDistributedTensor(block, 'o_acc', DSA_SPARSE_MLA_CHAIN_PV.cEncoding, float32),
    pOwn: block.registers('p_own', uint32, DSA_SPARSE_MLA_CHAIN_PV.aRegisters),
    softmax: new BlockOnlineSoftmax(block, DSA_SPARSE_MLA_CHAIN_QK.cEncoding),
    scaleLog2,
    invScaleLog2: b.let('inv_scale_log2', float32, div(lit(1, float32), scaleLog2)),
  };
}

/**
 * Emits both consumer warpgroups (threads [0, 256), `registers` after setmaxnreg): warpgroup 0 leads (even 64-token
 * blocks, V columns 0–255), warpgroup 1 follows (odd blocks, columns 256–511), over ⌈tiles / 2⌉ pairs of blocks, then
 * `epilogue` (default emitDsaSparseMlaEpilogue).
 */
export function emitDsaSparseMlaChainConsumers(
  b: BlockBuilder,
  cta: DsaSparseMlaCta,
  registers: number,
  epilogue: DsaSparseMlaEpilogue = emitDsaSparseMlaEpilogue,
): void {
  b.comment(`two consumer warpgroups, chained max: registers up to ${registers}; warpgroup 0 leads the even blocks, 1 follows`);
  b.expr(setMaxNReg(cta.target, 'inc', registers));
  const st = makeChainState(b, cta);
  st.block.threads((th) => {
    st.softmax.emitInit(th);
    clearTile(th, st.oAcc);
  });
  const pairs = b.let('pairs', int32, shr(add(cta.tiles, 1), 1));
  b.if(
    eq(st.wg, 0),
    (x) => emitDsaSparseMlaChainLeader(x, cta, st, pairs),
    (x) => emitDsaSparseMlaChainFollower(x, cta, st, pairs),
  );
  epilogue(b, cta, st, { columns: DSA_SPARSE_MLA_CHAIN_PV.policy.tileN, rowWriter: dsaSparseMlaRowWriter(st) });
}
