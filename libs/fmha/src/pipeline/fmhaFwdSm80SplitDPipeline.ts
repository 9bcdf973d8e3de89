import {
  add,
  addressOf,
  array,
  cpAsyncCommitGroup,
  cpAsyncWaitGroup,
  defineFunction,
  div,
  float32,
  index,
  int32,
  lt,
  mod,
  mul,
  packFloat2,
  pointer,
  sub,
  uint32,
  uint8,
  type BlockBuilder,
  type Expr,
  type FunctionDef,
  type Target,
  type VarExpr,
} from '@tilekit/codegen';
import { callLeaf, MmaSyncBlockGemmRs, MmaSyncBlockGemmSs, mmaSyncCEncoding, type MmaSyncBlockGemmState } from '@tilekit/gemm';
import { clearTile, makeDistributedTensor, type BlockEmitter, type DistributedTensor, type TileDistributionEncoding } from '@tilekit/tile';
import { BlockOnlineSoftmax } from '../softmax/blockOnlineSoftmax.ts';
import { emitFmhaFwdEdgeMask } from './fmhaFwdEdgeMask.ts';
import { emitFmhaFwdEpilogue } from './fmhaFwdEpilogue.ts';
import { DenseKeyTileWalk, type FmhaFwdKeyTileCursor } from './fmhaFwdKeyTiles.ts';
import type { FmhaFwdSm80Args } from './fmhaFwdSm80Pipeline.ts';
import { FmhaSm80TileCopy } from './fmhaSm80TileCopy.ts';
import { checkSplitDOperands, isMultipleIn, splitDPolicyError } from './splitDPolicyError.ts';
import {
  emitSplitDCopyTile,
  emitSplitDRingStep,
  emitSplitDSetup,
  splitDNestedEmitter,
  type SplitDEmitContextBase,
} from './emitSplitDRingStep.ts';

/** Policy of {@link FmhaFwdSm80SplitDPipeline} (FFPA level L1 on sm_80). */
export interface FmhaFwdSm80SplitDPolicy {
  /** Q/K/V/O element type (fp32 softmax; the accumulations below). */
  readonly dtype: 'fp16' | 'bf16';
  /** Head dim of Q and K: a multiple of 64 in [64, 1024] (Q·Kᵀ's reduction, streamed `qkChunk` columns at a time). */
  readonly headDim: number;
  /** Head dim of V and O: a multiple of 64 in [64, 256] (O stays in fp32 registers: headDimV / 2 per thread). */
  readonly headDimV: number;
  /** Query rows per block: 64 (4 warps of 16 rows). */
  readonly tileM: number;
  /** Key rows per iteration: 64. */
  readonly tileN: number;
  /** Head-dim columns of Q and K per ring slot: 16 (one mma k-step, FFPA's default) or 64 (four). */
  readonly qkChunk: number;
  /** Depth of the cp.async ring of Q/K chunks and V chunks: 1 to 4. */
  readonly stages: number;
  /**
   * Accumulator of each key tile's P·V chunk: `f32` (O += P·V straight into the fp32 O registers)
   * or `f16` (FFPA's mixed mode, fp16 inputs only: a 64-column partial P·V in `.f16` mma
   * accumulators — a sum of 64 products with P in [0, 1] — then added to the fp32 O).
   */
  readonly pvAccumulation: 'f32' | 'f16';
}

/** Columns of V (and of O) per ring slot: one 64-column chunk (a 128-byte swizzle row). */
export const FMHA_SM80_SPLIT_D_V_CHUNK = 64;

/** A policy rule broken: a `BlockGemmPolicyError` naming the field of the split-D pipeline. */
const policyError = (what: string, rule: string, found: unknown): never =>
  splitDPolicyError('FmhaFwdSm80SplitDPipeline', what, rule, found);

/** Checks a policy's fields in order: dtype, head dims, tileM, tileN, qkChunk, stages, pvAccumulation. */
function checkFmhaFwdSm80SplitDPolicy(policy: FmhaFwdSm80SplitDPolicy): void {
  const { dtype, headDim, headDimV, tileM, tileN, qkChunk, stages, pvAccumulation } = policy;
  checkSplitDOperands('FmhaFwdSm80SplitDPipeline', dtype, headDim);
  if (!isMultipleIn(headDimV, 64, 64, 256))
    policyError(
      'headDimV',
      'must be a multiple of 64 in [64, 256] (O is headDimV / 2 fp32 registers per thread; wider O: column slices)',
      headDimV,
    );
  if (tileM !== 64) policyError('tileM', 'must be 64 (4 warps of 16 query rows)', tileM);
  if (tileN !== 64) policyError('tileN', 'must be 64', tileN);
  if (qkChunk !== 16 && qkChunk !== 64) policyError('qkChunk', 'must be 16 or 64', qkChunk);
  if (!Number.isSafeInteger(stages) || stages < 1 || stages > 4) policyError('stages', 'must be an integer in [1, 4]', stages);
  if (pvAccumulation !== 'f32' && pvAccumulation !== 'f16') policyError('pvAccumulation', 'must be "f32" or "f16"', pvAccumulation);
  if (pvAccumulation === 'f16' && dtype !== 'fp16')
    policyError(
      'pvAccumulation',
      '"f16" needs fp16 inputs (mma.sync has no bf16 product with an f16 accumulator)',
      `${pvAccumulation} with ${dtype}`,
    );
}

/** What one ring load is: a Q·Kᵀ chunk or a V chunk of a key tile. */
export interface SplitDLoad {
  /** The key tile (iteration) it belongs to. */
  readonly tile: number;
  readonly kind: 'qk' | 'v';
  /** The chunk: Q/K columns [chunk · qkChunk, +qkChunk) or V columns [chunk · 64, +64). */
  readonly chunk: number;
  /** The ring slot it lands in. */
  readonly slot: number;
}

/**
 * The schedule of the ring: loads are consumed in the order tile 0's `qkChunks` Q·Kᵀ chunks, its
 * `vChunks` V chunks, tile 1's …; load `g` is in slot `g mod stages`. The emitted code computes the
 * same decode (`g / steps`, `g mod steps`, `g mod stages`) from `int` expressions.
 */
export function splitDLoadOf(g: number, qkChunks: number, vChunks: number, stages: number): SplitDLoad {
  const steps = qkChunks + vChunks;
  const tile = Math.floor(g / steps);
  const local = g - tile * steps;
  return local < qkChunks
    ? { tile, kind: 'qk', chunk: local, slot: g % stages }
    : { tile, kind: 'v', chunk: local - qkChunks, slot: g % stages };
}

/** One operation of a ring step g (see {@link splitDRingStep}). */
export type SplitDRingOp =
  | { readonly op: 'issue'; readonly ahead: number }
  | { readonly op: 'wait'; readonly pending: number }
  | { readonly op: 'sync' }
  | { readonly op: 'compute' };

/** Loads the prologue issues before step 0 (loads 0 … stages − 2, one cp.async group each). */
export function splitDRingPrologueLoads(stages: number): number {
  return stages - 1;
}

/**
 * What step g of the ring does, in order (every `issue` of load g + ahead commits one cp.async
 * group, empty past the last key tile). stages ≥ 2: wait until at most stages − 2 groups are
 * pending (load g landed), `__syncthreads` (visible to all; every warp done with step g − 1), issue
 * load g + stages − 1 (into step g − 1's slot), compute. One stage: issue load g, wait for all,
 * sync, compute, sync (every warp done before step g + 1 overwrites the slot). The spec checks the
 * protocol with a model of cp.async groups and barriers for every depth.
 */
export function splitDRingStep(stages: number): readonly SplitDRingOp[] {
  if (stages === 1) return [{ op: 'issue', ahead: 0 }, { op: 'wait', pending: 0 }, { op: 'sync' }, { op: 'compute' }, { op: 'sync' }];
  return [{ op: 'wait', pending: stages - 2 }, { op: 'sync' }, { op: 'issue', ahead: stages - 1 }, { op: 'compute' }];
}

/** The shared-memory plan of the ring: per slot Q chunk | K chunk, or one V chunk, from the start of the slot. */
export interface SplitDSharedPlan {
  readonly qChunkBytes: number;
  readonly kChunkBytes: number;
  readonly vChunkBytes: number;
  /** Offset of the K chunk inside a slot (after the Q chunk). */
  readonly kOffset: number;
  readonly slotBytes: number;
  readonly usedBytes: number;
  /** Dynamic shared memory to request (used + 1024 bytes of alignment slack). */
  readonly sharedBytes: number;
}

/**
 * The P·V GEMM of one 64-column chunk of V and O (K = tileN keys, A = P packed once per key tile):
 * `MmaSyncBlockGemmRs`'s B side, its mma.sync issued into a slice of the full-width O accumulator
 * (fp32) or into a chunk-sized `.f16x2` accumulator (mixed mode).
 */
class SplitDPvChunkGemm extends MmaSyncBlockGemmRs {
  /** Emits B loads and mmas for k-step `kk`: C tile j at `c(j)` (an address), A fragment at `aFrag[4·kk]`. */
  emitChunkStep(
    b: BlockBuilder,
    target: Target,
    state: MmaSyncBlockGemmState,
    bTile: Expr,
    kk: number,
    aFrag: VarExpr,
    leaf: FunctionDef,
    c: (j: number) => Expr,
  ): void {
    this.emitBLoads(b, target, state, bTile, kk);
    for (let j = 0; j < this.nRepeats; j++)
      b.expr(callLeaf(leaf, [c(j), addressOf(index(aFrag, 4 * kk)), addressOf(index(state.bFrag, 2 * j)), c(j)]));
  }
}

/** `mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16`: D (2 × .f16x2) = A (4 × .f16x2) · B (2 × .f16x2) + C. */
function defineMmaF16Accumulator(target: Target): FunctionDef {
  target.require('mma-sync');
  return defineFunction(
    {
      name: 'tk_mma_m16n8k16_f16_f16_f16_f16',
      qualifiers: target.functionQualifiers('force'),
      params: {
        d: pointer(uint32),
        a: pointer(uint32, { const: true }),
        b: pointer(uint32, { const: true }),
        c: pointer(uint32, { const: true }),
      },
    },
    (b) => {
      b.comment('mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16: D (2 x .f16x2) = A (4 x .f16x2) * B (2 x .f16x2) + C');
      b.verbatim([
        'asm volatile(',
        '    "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0, %1}, {%2, %3, %4, %5}, {%6, %7}, {%8, %9};\\n"',
        '    : "=r"(d[0]), "=r"(d[1])',
        '    : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]));',
      ]);
    },
  );
}

/** `o[0] += lo(h); o[1] += hi(h)`: one `.f16x2` accumulator register widened (exactly) and added to two fp32 O elements. */
function defineAddF16x2(target: Target): FunctionDef {
  return defineFunction(
    {
      name: 'tk_add_f16x2_to_f32',
      qualifiers: target.functionQualifiers('force'),
      params: { o: pointer(float32), h: uint32 },
    },
    (b) => {
      b.verbatim([
        'float lo, hi;',
        'asm("{\\n  .reg .f16 l, h;\\n  mov.b32 {l, h}, %2;\\n  cvt.f32.f16 %0, l;\\n  cvt.f32.f16 %1, h;\\n}\\n" : "=f"(lo), "=f"(hi) : "r"(h));',
        'o[0] += lo;',
        'o[1] += hi;',
      ]);
    },
  );
}

/** What the steps of {@link FmhaFwdSm80SplitDPipeline.emit} share. */
interface SplitDEmitContext extends SplitDEmitContextBase<FmhaFwdSm80Args> {
  /** The first key row of a key tile (the dense walk's rows: any tile, any number of times). */
  readonly keyRows: FmhaFwdKeyTileCursor;
  readonly iters: Expr;
  readonly qkState: MmaSyncBlockGemmState;
  readonly pvState: MmaSyncBlockGemmState;
  readonly sAcc: DistributedTensor;
  readonly oAcc: DistributedTensor;
  readonly softmax: BlockOnlineSoftmax;
  readonly pFrag: VarExpr;
}

/**
 * The sm_80 attention forward main loop for large head dims: FFPA's level L1 ("split-D": Q·Kᵀ and
 * P·V tiled along the head dim; xlite-dev/ffpa-attn v0.0.2's `ffpa_mma_stages_split_q_L1`), 4 warps
 * of 16 query rows (warps along M only, so a row's keys stay in one warp), mma.sync m16n8k16 with
 * ldmatrix from XOR-swizzled shared memory, and shared memory that does not grow with d.
 *
 * Loop order, per key tile j of 64 keys (the key range the mask leaves):
 * 1. S = Σ over the d / qkChunk chunks c of Q[:, c]·K[j, c]ᵀ (fp32 accumulator, a runtime loop):
 *    Q chunks are re-read from global memory (L2) through the ring for every key tile, as FFPA does
 *    for large d (Q resident in shared memory would be 64·d·2 bytes: 128 KiB at d 1024).
 * 2. The mask on edge tiles; `BlockOnlineSoftmax` (m, l; O rescaled by 2^(m_old − m_new) once,
 *    all its columns); P packed once into 16-bit A fragments (4 × 4 registers; S is then dead).
 * 3. For each 64-column chunk v of d_v (statically unrolled: O's registers are indexed statically):
 *    V[j, v] through the ring, O[:, v] += P·V[j, v] (fp32 straight into O's slice, or in `.f16`
 *    accumulators added to O: `pvAccumulation`).
 *
 * Ring: `stages` slots, each a Q chunk + K chunk or a V chunk (both from the slot's start); loads
 * are consumed in a fixed order (`splitDLoadOf`), load g in slot g mod stages, each its own
 * cp.async group (empty past the last key tile, so the count stays uniform). With stages ≥ 2 the
 * prologue issues loads 0 … stages − 2 and step g runs: `cp.async.wait_group(stages − 2)` (load g
 * landed: only the newer stages − 2 may be in flight), `__syncthreads` (load g visible to every
 * warp, and every warp is done with step g − 1, whose slot is the one load g + stages − 1 takes),
 * issue load g + stages − 1, compute step g. The prefetch runs across key tiles (the next tile's Q/K
 * chunks load during this tile's P·V: FFPA's `kPrefetchQK`). With one stage, step g issues load g,
 * waits for all, syncs, computes and syncs again before the slot is reused. Copies are 16-byte
 * `cp.async.cg`; a row outside the sequence copies 0 source bytes (zero fill, source clamped).
 * Epilogue: `emitFmhaFwdEpilogue` (O /= l, LSE, predicated stores) from registers.
 */
export class FmhaFwdSm80SplitDPipeline {
  readonly policy: FmhaFwdSm80SplitDPolicy;
  /** Name tags of the policy's own fields for an instance key. */
  readonly keyTags = Object.freeze({ qkChunk: 'qk', stages: 's', pvAccumulation: 'pv' });
  readonly warps: number;
  readonly threads: number;
  /** S += Q[:, c]·K[:, c]ᵀ per chunk: A = Q chunk (tileM × qkChunk, K-major), B = K chunk (tileN × qkChunk, K-major). */
  readonly qk: MmaSyncBlockGemmSs;
  /** O[:, v] += P·V[:, v] per 64-column chunk: B = V chunk (64 × tileN, MN-major). */
  readonly pv: MmaSyncBlockGemmRs;
  readonly #pvChunk: SplitDPvChunkGemm;
  /** The O accumulator's distribution (tileM × headDimV, the P·V GEMM's C over all chunks). */
  readonly oEncoding: TileDistributionEncoding;
  readonly qkChunks: number;
  readonly vChunks: number;
  readonly qCopyEncoding: TileDistributionEncoding;
  readonly kCopyEncoding: TileDistributionEncoding;
  readonly vCopyEncoding: TileDistributionEncoding;
  readonly shared: SplitDSharedPlan;
  readonly sharedBytes: number;
  readonly #copy: FmhaSm80TileCopy;

  constructor(policy: FmhaFwdSm80SplitDPolicy) {
    checkFmhaFwdSm80SplitDPolicy(policy);
    const { dtype, headDim, headDimV, tileM, tileN, qkChunk } = policy;
    this.policy = Object.freeze({ ...policy });
    this.warps = tileM / 16;
    this.threads = 32 * this.warps;
    const warps = [this.warps, 1] as const;
    this.qk = new MmaSyncBlockGemmSs({ dtype, tileM, tileN, tileK: qkChunk, warps, aMajor: 'K', bMajor: 'K' });
    this.#pvChunk = new SplitDPvChunkGemm({ dtype, tileM, tileN: FMHA_SM80_SPLIT_D_V_CHUNK, tileK: tileN, warps, bMajor: 'MN' });
    this.pv = this.#pvChunk;
    this.oEncoding = mmaSyncCEncoding({ dtype, warps, tileM, tileN: headDimV });
    this.qkChunks = headDim / qkChunk;
    this.vChunks = headDimV / FMHA_SM80_SPLIT_D_V_CHUNK;
    for (let v = 0; v < this.vChunks; v++) {
      for (let j = 0; j < this.pv.nRepeats; j++) {
        const whole = this.oEncoding.calculateD([0, (v * this.pv.nRepeats + j) >> 1, j & 1, 0, 0]);
        if (whole !== splitDChunkAccumulatorOffset(v, this.pv.accumulatorOffset(0, j), this.pv.accumulatorsPerThread))
          policyError('O accumulator', 'chunk v, n8 tile j must be O register chunk·(chunk accumulators) + 4j', `${v}, ${j}: ${whole}`);
      }
    }
    this.#copy = new FmhaSm80TileCopy('FmhaFwdSm80SplitDPipeline', this.warps);
    this.qCopyEncoding = this.#copy.encoding('Q chunk', tileM, qkChunk);
    this.kCopyEncoding = this.#copy.encoding('K chunk', tileN, qkChunk);
    this.vCopyEncoding = this.#copy.encoding('V chunk', tileN, FMHA_SM80_SPLIT_D_V_CHUNK);
    this.shared = splitDSharedPlan(this.qk.aTileBytes, this.qk.bTileBytes, this.pv.bTileBytes, policy.stages);
    this.sharedBytes = this.shared.sharedBytes;
    for (const [what, offset, layout] of [
      ['K chunk', this.shared.kOffset, this.qk.bLayout],
      ['ring slot', this.shared.slotBytes, this.qk.aLayout],
      ['ring slot (V)', this.shared.slotBytes, this.pv.bLayout],
    ] as const) {
      if (offset % layout.repeatBytes !== 0) policyError(what, `must start on the ${layout.repeatBytes}-byte swizzle repeat`, offset);
    }
  }

  /** Query tiles of a sequence of `seqlenQ` rows. */
  queryTiles(seqlenQ: number): number {
    return Math.ceil(seqlenQ / this.policy.tileM);
  }

  /** Emits the whole kernel body into `b`. */
  emit(b: BlockBuilder, target: Target, args: FmhaFwdSm80Args): void {
    const P = this.policy;
    const S = this.shared;
    const plan =
      `dynamic shared memory, aligned up to 1024 bytes: a ring of ${P.stages} slots of ${S.slotBytes} B, ` +
      `each a Q chunk (${S.qChunkBytes} B) + K chunk (${S.kChunkBytes} B) or a V chunk (${S.vChunkBytes} B)`;
    const { tid, smem, block } = emitSplitDSetup(b, target, this.threads, args.symbols, plan);

    const keyTiles = new DenseKeyTileWalk(args.mask, args.split);
    const walk = { target, tid, shared: smem, m0: args.m0, tileM: P.tileM, tileN: P.tileN };
    const iters = keyTiles.emitIters(b, walk);
    const ctx: SplitDEmitContext = {
      b,
      target,
      args,
      block,
      smem,
      keyRows: keyTiles.emitCursor(b, walk),
      iters,
      qkState: this.qk.emitSetup(b, block.indexEmitter, tid),
      pvState: this.pv.emitSetup(b, block.indexEmitter, tid),
      sAcc: makeDistributedTensor(block, 's_acc', this.qk.cEncoding, float32),
      oAcc: makeDistributedTensor(block, 'o_acc', this.oEncoding, float32),
      softmax: new BlockOnlineSoftmax(block, this.qk.cEncoding),
      pFrag: b.declare('p_frag', array(uint32, 4 * this.pv.kSteps), null, { storage: 'mutable' }),
    };
    block.threads((t) => {
      ctx.softmax.emitInit(t);
      clearTile(t, ctx.oAcc);
    });
    const prologue = splitDRingPrologueLoads(P.stages);
    if (prologue > 0) {
      b.comment(`prologue: loads 0 … ${prologue - 1} of the ring, one cp.async group each`);
      for (let g = 0; g < prologue; g++) this.#issueLoad(ctx, block, g);
    }
    const steps = this.qkChunks + this.vChunks;
    block.forRange({ name: 'it', to: iters }, (lb, it) => {
      const l = lb.b;
      const g0 = l.let('g0', int32, mul(it, steps));
      l.comment(`S = Σ over ${this.qkChunks} head-dim chunks of Q[:, c]·K[j, c]ᵀ`);
      lb.threads((t) => clearTile(t, ctx.sAcc));
      lb.forRange({ name: 'c', to: this.qkChunks, unroll: 1 }, (cb, c) => {
        const g = cb.b.let('g', int32, add(g0, c));
        this.#emitStep(ctx, cb, g, (slot) => {
          const qTile = cb.b.let('q_tile', pointer(uint8), slot);
          const kTile = cb.b.let('k_tile', pointer(uint8), add(slot, S.kOffset));
          this.qk.emitMma(cb.b, target, ctx.sAcc, ctx.qkState, { aTile: qTile, bTile: kTile });
        });
      });
      this.#emitSoftmax(ctx, lb, it);
      for (let v = 0; v < this.vChunks; v++) {
        const g = l.let(`g_v${v}`, int32, add(g0, this.qkChunks + v));
        l.comment(`O[:, ${v * FMHA_SM80_SPLIT_D_V_CHUNK}:${(v + 1) * FMHA_SM80_SPLIT_D_V_CHUNK}] += P·V chunk ${v}`);
        this.#emitStep(ctx, lb, g, (slot) => this.#emitPvChunk(ctx, lb, v, l.let(`v_tile${v}`, pointer(uint8), slot)));
      }
    });
    b.expr(cpAsyncWaitGroup(target, 0));

    b.comment('epilogue: O /= l (0 for rows with nothing unmasked), LSE, predicated store');
    emitFmhaFwdEpilogue(block, ctx.softmax, ctx.oAcc, args, { tileM: P.tileM, headDimV: P.headDimV, oEncoding: this.oEncoding });
  }

  /** One ring step g: {@link splitDRingStep}'s waits, barriers and load issue around `compute` (given the slot's `uint8*`). */
  #emitStep(ctx: SplitDEmitContext, lb: BlockEmitter, g: Expr, compute: (slot: Expr) => void): void {
    emitSplitDRingStep(ctx, this, lb, g, (load) => this.#issueLoad(ctx, lb, load), compute);
  }

  /** The mask on edge tiles, the online softmax (O rescaled), P packed into A fragments. */
  #emitSoftmax(ctx: SplitDEmitContext, lb: BlockEmitter, it: Expr): void {
    const { sAcc, args, target } = ctx;
    const P = this.policy;
    const l = lb.b;
    const j0 = ctx.keyRows.row(l, it, 'j0');
    emitFmhaFwdEdgeMask(l, {
      args,
      j0,
      tileM: P.tileM,
      tileN: P.tileN,
      sAcc,
      threadsOf: (mb) => splitDNestedEmitter(ctx, this.threads, mb, lb),
    });
    lb.threads((t) => {
      t.b.comment('online softmax: S becomes P = 2^(S·scale·log2 e − m); O *= 2^(m_old − m_new)');
      const corr = ctx.softmax.emitUpdate(t, sAcc, args.scaleLog2)!;
      ctx.softmax.emitRescale(t, ctx.oAcc, corr);
    });
    l.comment("P packed once into the P·V GEMM's A fragments (S's C distribution is A's: warps along M only)");
    const regs = sAcc.registers.variable;
    for (let kk = 0; kk < this.pv.kSteps; kk++) {
      const d0 = this.pv.aEncoding.calculateD([0, kk, 0, 0, 0]);
      for (let r = 0; r < 4; r++)
        l.assign(index(ctx.pFrag, 4 * kk + r), packFloat2(target, P.dtype, index(regs, d0 + 2 * r), index(regs, d0 + 2 * r + 1)));
    }
  }

  /** O[:, v] += P·V chunk v from `vTile`: straight into O's fp32 registers, or through `.f16x2` accumulators. */
  #emitPvChunk(ctx: SplitDEmitContext, lb: BlockEmitter, v: number, vTile: Expr): void {
    const { target } = ctx;
    const l = lb.b;
    const pv = this.#pvChunk;
    const base = splitDChunkAccumulatorOffset(v, 0, pv.accumulatorsPerThread);
    const oRegs = ctx.oAcc.registers.variable;
    if (this.policy.pvAccumulation === 'f32') {
      const leaf = pv.atom.defineWrapper(target);
      for (let kk = 0; kk < pv.kSteps; kk++)
        pv.emitChunkStep(l, target, ctx.pvState, vTile, kk, ctx.pFrag, leaf, (j) =>
          addressOf(index(oRegs, base + pv.accumulatorOffset(0, j))),
        );
      return;
    }
    const leaf = defineMmaF16Accumulator(target);
    const half = l.declare(`pv_h${v}`, array(uint32, 2 * pv.nRepeats), null, { storage: 'mutable' });
    for (let r = 0; r < 2 * pv.nRepeats; r++) l.assign(index(half, r), 0);
    for (let kk = 0; kk < pv.kSteps; kk++)
      pv.emitChunkStep(l, target, ctx.pvState, vTile, kk, ctx.pFrag, leaf, (j) => addressOf(index(half, 2 * j)));
    const add2 = defineAddF16x2(target);
    for (let j = 0; j < pv.nRepeats; j++) {
      for (let h = 0; h < 2; h++)
        l.expr(callLeaf(add2, [addressOf(index(oRegs, base + pv.accumulatorOffset(0, j) + 2 * h)), index(half, 2 * j + h)]));
    }
  }

  /** Issues ring load `g` (a number or an `int`): decoded into (key tile, Q/K or V chunk, slot), copied if the tile is visited; always one group. */
  #issueLoad(ctx: SplitDEmitContext, lb: BlockEmitter, g: Expr | number): void {
    const { target } = ctx;
    const P = this.policy;
    const l = lb.b;
    const steps = this.qkChunks + this.vChunks;
    const load = l.let('load', int32, g);
    const tile = l.let('load_tile', int32, div(load, steps));
    const local = l.let('load_step', int32, sub(load, mul(tile, steps)));
    const dst = l.let('load_dst', pointer(uint8), add(ctx.smem, mul(mod(load, P.stages), this.shared.slotBytes)));
    const row0 = ctx.keyRows.row(l, tile, 'load_row0');
    l.if(lt(tile, ctx.iters), (ib) => {
      const be = splitDNestedEmitter(ctx, this.threads, ib, lb);
      ib.if(
        lt(local, this.qkChunks),
        (qb) => {
          qb.comment('a Q·Kᵀ chunk: Q[m0:, c·qkChunk:] and K[j0:, c·qkChunk:]');
          const qe = splitDNestedEmitter(ctx, this.threads, qb, be);
          const col0 = qb.let('load_col0', int32, mul(local, P.qkChunk));
          emitSplitDCopyTile(
            this.#copy,
            ctx.target,
            qe,
            ctx.args.q,
            [P.tileM, P.qkChunk],
            [ctx.args.m0, col0],
            this.qCopyEncoding,
            this.qk.aLayout,
            dst,
          );
          emitSplitDCopyTile(
            this.#copy,
            ctx.target,
            qe,
            ctx.args.k,
            [P.tileN, P.qkChunk],
            [row0, col0],
            this.kCopyEncoding,
            this.qk.bLayout,
            add(dst, this.shared.kOffset),
          );
        },
        (vb) => {
          vb.comment('a V chunk: V[j0:, v·64:]');
          const ve = splitDNestedEmitter(ctx, this.threads, vb, be);
          const col0 = vb.let('load_col0', int32, mul(sub(local, this.qkChunks), FMHA_SM80_SPLIT_D_V_CHUNK));
          emitSplitDCopyTile(
            this.#copy,
            ctx.target,
            ve,
            ctx.args.v,
            [P.tileN, FMHA_SM80_SPLIT_D_V_CHUNK],
            [row0, col0],
            this.vCopyEncoding,
            this.pv.bLayout,
            dst,
          );
        },
      );
    });
    l.expr(cpAsyncCommitGroup(target));
  }
}

/**
 * Register offset (in O's thread buffer) of an accumulator of 64-column chunk `v`: the chunk GEMM
 * puts it at `tileOffset` (4j + r for n8 tile j) of its `chunkAccumulators` (32) registers, and O
 * holds the chunks one after another (checked against O's distribution in the constructor).
 */
export function splitDChunkAccumulatorOffset(v: number, tileOffset: number, chunkAccumulators: number): number {
  return v * chunkAccumulators + tileOffset;
}

/** The ring's shared memory: `stages` slots, each max(Q chunk + K chunk, V chunk) bytes; 1024 bytes of alignment slack. */
export function splitDSharedPlan(qChunkBytes: number, kChunkBytes: number, vChunkBytes: number, stages: number): SplitDSharedPlan {
  const slotBytes = Math.max(qChunkBytes + kChunkBytes, vChunkBytes);
  const usedBytes = stages * slotBytes;
  return Object.freeze({
    qChunkBytes,
    kChunkBytes,
    vChunkBytes,
    kOffset: qChunkBytes,
    slotBytes,
    usedBytes,
    sharedBytes: usedBytes + 1024,
  });
}
