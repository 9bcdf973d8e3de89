import {
  add,
  bitAnd,
  bitXor,
  cast,
  div,
  int32,
  lit,
  mbarrierArriveExpectTx,
  mbarrierArriveWarp,
  mbarrierInit,
  mbarrierWaitParity,
  mul,
  pointer,
  tmaLoad,
  uint32,
  uint8,
  type BlockBuilder,
  type Expr,
} from '@tilekit/codegen';
import { BlockGemmPolicyError, type WgmmaBlockGemmSs } from '@tilekit/gemm';
import type { FmhaFwdKeyPart } from './fmhaFwdKeyPart.ts';
import type { FmhaFwdKOperand, FmhaFwdQkPlan, FmhaFwdQkSource } from './fmhaFwdQkSource.ts';
import type { FmhaFwdWsContext } from './fmhaFwdWsContext.ts';
import type { FmhaFwdWsPolicy } from './fmhaFwdWsPipeline.ts';
import type { FmhaFwdWsTileSteps } from './fmhaFwdWsTileSteps.ts';

const CHUNK = 64;

/** Chunk `c` of key tile `it` in the chunk ring: its stage and the parity of its round (locals). */
interface ChunkStage {
  readonly stage: Expr;
  readonly parity: Expr;
}

/**
 * Q and K streamed through a ring of `stages` chunk buffers, 64 head-dim columns at a time (FFPA's
 * fine-grained tiling of Q·Kᵀ along the head dim): per key tile the producer loads, chunk by chunk,
 * Q's and K's 64 columns into one buffer; the consumers accumulate S over the chunks and release
 * each buffer once the wgmma that read it is done. Shared memory for Q and K is `stages` × (tileM +
 * tileN) × 128 bytes whatever the head dim, so the head dim may reach 1024. Q is read again per key
 * tile (from L2).
 */
export class FmhaFwdChunkedQkSource implements FmhaFwdQkSource {
  readonly tag: 'chunked' | 'cluster' = 'chunked';
  readonly maxHeadDim = 1024;
  readonly stages: number;
  readonly key: FmhaFwdKeyPart;

  constructor(stages: number, key?: FmhaFwdKeyPart) {
    if (![2, 4, 8].includes(stages)) throw new BlockGemmPolicyError('FmhaFwdChunkedQkSource stages', 'must be 2, 4 or 8', String(stages));
    this.stages = stages;
    this.key = key ?? Object.freeze({ config: { qkChunkStages: stages }, tags: { qkChunkStages: 'qkc' } });
    if (new.target === FmhaFwdChunkedQkSource) Object.freeze(this);
  }

  /** Chunks this CTA accumulates per key tile (all of the head dim's). */
  protected chunkCount(p: FmhaFwdWsContext['pipeline']): number {
    return p.slabsQK;
  }

  /** The first head-dim column of this CTA's chunk `c`. */
  protected chunkColumn(_l: BlockBuilder, _ctx: FmhaFwdWsContext, c: number): Expr | number {
    return c * CHUNK;
  }

  check(policy: FmhaFwdWsPolicy): void {
    const bad = (rule: string, found: unknown): never => {
      throw new BlockGemmPolicyError('FmhaFwdWsPipeline qkSource', rule, String(found));
    };
    if (policy.headDim % CHUNK !== 0) bad(`streams whole ${CHUNK}-column chunks: headDim a multiple of ${CHUNK}`, policy.headDim);
    if (policy.qkOperand !== undefined) bad('streams fp16/bf16 Q and K only (no Q·Kᵀ operand transform)', policy.qkOperand.tag);
    if (policy.pvGate !== undefined) bad('takes no P·V gate', policy.pvGate.tag);
    if (policy.schedule?.tag === 'pingPong')
      bad('takes no ping-pong schedule (a turn would wait for chunks that only the other warpgroup can free)', policy.schedule.tag);
  }

  plan(qk: WgmmaBlockGemmSs): FmhaFwdQkPlan {
    return { qBytes: 0, kStages: this.stages, kStageBytes: qk.aTileBytes + qk.bTileBytes, barriers: 2 * this.stages };
  }

  protected full(ctx: Pick<FmhaFwdWsContext, 'ring'>, stage: Expr | number): Expr {
    return add(ctx.ring.end, stage);
  }

  protected empty(ctx: Pick<FmhaFwdWsContext, 'ring'>, stage: Expr | number): Expr {
    return add(ctx.ring.end, add(this.stages, stage));
  }

  emitInit(t: BlockBuilder, ctx: Pick<FmhaFwdWsContext, 'target' | 'ring'>, consumerWarps: number): void {
    t.forRange({ name: 'c', to: this.stages, unroll: true }, (l, c) => {
      l.expr(mbarrierInit(ctx.target, this.full(ctx, c), 1));
      l.expr(mbarrierInit(ctx.target, this.empty(ctx, c), consumerWarps));
    });
  }

  emitLoadQ(one: BlockBuilder): void {
    one.comment('Q is streamed with K, chunk by chunk, per key tile');
  }

  /** Chunk `c` of key tile `it`: its stage in the chunk ring and the parity of its round. */
  #chunk(l: BlockBuilder, ctx: FmhaFwdWsContext, it: Expr, c: number): ChunkStage {
    const g = l.let('qk_chunk', int32, add(mul(it, this.chunkCount(ctx.pipeline)), c));
    return {
      stage: l.let('qk_stage', int32, bitAnd(g, this.stages - 1)),
      parity: l.let('qk_parity', uint32, cast(bitAnd(div(g, this.stages), 1), uint32)),
    };
  }

  emitLoadK(l: BlockBuilder, ctx: FmhaFwdWsContext, k: FmhaFwdKOperand, _parity: Expr, row: Expr): void {
    const { pipeline: p, target, args, smem } = ctx;
    for (let c = 0; c < this.chunkCount(p); c++) {
      const { stage, parity } = this.#chunk(l, ctx, k.it, c);
      l.expr(mbarrierWaitParity(target, this.empty(ctx, stage), bitXor(parity, 1)));
      l.expr(mbarrierArriveExpectTx(target, this.full(ctx, stage), p.kStageBytes));
      const dst = l.let('qk_buffer', pointer(uint8), add(smem, add(p.kOffset, mul(stage, p.kStageBytes))));
      const bar = this.full(ctx, stage);
      const d0 = this.chunkColumn(l, ctx, c);
      l.expr(tmaLoad(target, { dst, map: args.qMap, bar, coords: args.qCoords(d0, args.m0) }));
      l.expr(tmaLoad(target, { dst: add(dst, p.qk.aTileBytes), map: args.kMap, bar, coords: args.kCoords(d0, row) }));
    }
  }

  emitAwaitQ(cons: BlockBuilder): void {
    cons.comment('Q arrives with each chunk of K');
  }

  kOperand(_l: BlockBuilder, _ctx: FmhaFwdWsContext, it: Expr, s: Expr): FmhaFwdKOperand {
    return { it, s };
  }

  /** Per chunk: wait for it, issue its wgmma; once the previous chunk's wgmma is done, free that chunk's buffer. */
  issueQk(l: BlockBuilder, steps: FmhaFwdWsTileSteps, k: FmhaFwdKOperand): void {
    const { pipeline: p, target, smemAddr } = steps.ctx;
    const acc = steps.state.sAcc;
    const chunks = this.chunkCount(p);
    l.comment(`S = Q·Kᵀ streamed in ${chunks} chunks of ${CHUNK} head-dim columns; a chunk's buffer is freed once its wgmma is done`);
    let previous: Expr | undefined;
    for (let c = 0; c < chunks; c++) {
      const { stage, parity } = this.#chunk(l, steps.ctx, k.it, c);
      l.expr(mbarrierWaitParity(target, this.full(steps.ctx, stage), parity));
      const aTile = l.let('qk_a', uint32, add(smemAddr, cast(add(p.kOffset, mul(stage, p.kStageBytes)), uint32)));
      p.qk.emitMma(l, target, acc, {
        aTile,
        bTile: add(aTile, p.qk.aTileBytes),
        warpgroup: steps.state.warpgroup,
        accumulate: lit(c === 0 ? 0 : 1, int32),
      });
      if (previous !== undefined) {
        p.qk.emitWait(l, target, acc, 1);
        l.expr(mbarrierArriveWarp(target, this.empty(steps.ctx, previous)));
      }
      previous = stage;
    }
  }

  /** Frees the last chunk's buffer (S is waited). */
  releaseK(l: BlockBuilder, steps: FmhaFwdWsTileSteps, k: FmhaFwdKOperand): void {
    const { stage } = this.#chunk(l, steps.ctx, k.it, this.chunkCount(steps.ctx.pipeline) - 1);
    l.expr(mbarrierArriveWarp(steps.ctx.target, this.empty(steps.ctx, stage)));
  }
}
