import { add, cast, div, float32, int32, pointer, uint32, type BlockBuilder, type Expr } from '@tilekit/codegen';
import { makeWgmmaSmemLayout, type WgmmaSmemLayout } from '@tilekit/gemm';
import { BlockEmitter, makeDistributedTensor, type DistributedTensor, type RegisterArray } from '@tilekit/tile';
import type { FmhaBwdWsContext } from './fmhaBwdWsContext.ts';

/** What the consumer warpgroups' steps share: their accumulators, fragments and the dSᵀ tile in shared memory. */
export interface FmhaBwdWsConsumerState {
  readonly ctx: FmhaBwdWsContext;
  /** The consumers' block emitter; {@link FmhaBwdWsConsumerState.emitter} nests one in a loop body. */
  readonly block: BlockEmitter;
  emitter(bb: BlockBuilder): BlockEmitter;
  /** Sᵀ (then Pᵀ), dPᵀ (then dSᵀ), dV, dK and dQ accumulators. */
  readonly sAcc: DistributedTensor;
  readonly dpAcc: DistributedTensor;
  readonly dvAcc: DistributedTensor;
  readonly dkAcc: DistributedTensor;
  readonly dqAcc: DistributedTensor;
  /** Pᵀ and dSᵀ packed to fp16/bf16 pairs: the register A operands of dV and dK. */
  readonly pFrag: RegisterArray;
  readonly dsFrag: RegisterArray;
  /** `int`: this thread's consumer warpgroup (0 or 1). */
  readonly wg: Expr;
  /** Q/dO stages consumed so far, key tiles consumed so far. */
  readonly done: Expr;
  readonly tiles: Expr;
  /**
   * The dSᵀ tile in shared memory: per 64-key-row chunk (one per consumer warpgroup) the M-major
   * (query-contiguous) A operand of dQ = dS·K; element (query q, key row r) at the layout's offset.
   */
  readonly dsLayout: WgmmaSmemLayout;
  readonly dsChunkBytes: number;
  /** `uint32_t*` of the dSᵀ tile: one packed pair per 32-bit word. */
  readonly dsPairs: Expr;
}

/** One key tile of a consumer warpgroup: its round, first key row, query range and its K and V chunks (shared addresses). */
export interface FmhaBwdWsKeyTile {
  readonly round: Expr;
  readonly j0: Expr;
  readonly start: Expr;
  readonly nq: Expr;
  readonly iters: Expr;
  readonly kChunk: Expr;
  readonly vChunk: Expr;
}

/** One query tile of a key tile: its ring stage, query head, first query row, Q/dO tiles (shared addresses) and LSE/D rows. */
export interface FmhaBwdWsQueryTile {
  readonly it: Expr;
  readonly s: Expr;
  readonly head: Expr;
  readonly i0: Expr;
  readonly qTile: Expr;
  readonly doTile: Expr;
  readonly lseStage: Expr;
}

/** Declares the consumers' accumulators, fragments and counters (registers up to `consumerRegisters` already raised). */
export function makeFmhaBwdWsConsumerState(cons: BlockBuilder, ctx: FmhaBwdWsContext): FmhaBwdWsConsumerState {
  const { pipeline: p, target, args } = ctx;
  const index0 = { symbols: args.symbols };
  const block = new BlockEmitter(cons, target, { numThreads: p.consumerThreads, index: index0 });
  const emitter = (bb: BlockBuilder): BlockEmitter => new BlockEmitter(bb, target, { numThreads: p.consumerThreads, index: index0 }, block);
  const sAcc = makeDistributedTensor(block, 'st_acc', p.sT.cEncoding, float32);
  const dpAcc = makeDistributedTensor(block, 'dpt_acc', p.dpT.cEncoding, float32);
  const dvAcc = makeDistributedTensor(block, 'dv_acc', p.dvGemm.cEncoding, float32);
  const dkAcc = makeDistributedTensor(block, 'dk_acc', p.dkGemm.cEncoding, float32);
  const dqAcc = makeDistributedTensor(block, 'dq_acc', p.dqGemm.cEncoding, float32);
  const pFrag = block.registers('p_frag', uint32, p.dvGemm.aRegisters);
  const dsFrag = block.registers('ds_frag', uint32, p.dkGemm.aRegisters);
  const wg = cons.let('warpgroup', int32, div(ctx.tid, 128));
  const done = cons.declare('q_loads', int32, 0, { storage: 'mutable' });
  const tiles = cons.declare('kv_round', int32, 0, { storage: 'mutable' });
  const dsLayout = makeWgmmaSmemLayout({ swizzle: '128B', dtype: p.policy.dtype, mn: p.policy.tileM, k: 64, major: 'MN' });
  const dsPairs = cons.let('ds_pairs', pointer(uint32), cast(add(ctx.smem, p.offsets.ds), pointer(uint32)));
  return {
    ctx,
    block,
    emitter,
    sAcc,
    dpAcc,
    dvAcc,
    dkAcc,
    dqAcc,
    pFrag,
    dsFrag,
    wg,
    done,
    tiles,
    dsLayout,
    dsChunkBytes: dsLayout.bytes,
    dsPairs,
  };
}
