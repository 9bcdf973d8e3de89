import {
  add,
  addressOf,
  and,
  bitXor,
  cast,
  cpAsyncCommitGroup,
  cpAsyncWaitGroup,
  div,
  exp2Approx,
  float32,
  index,
  infinity,
  int32,
  int64,
  lt,
  maxOf,
  mod,
  mul,
  packFloat2,
  pointer,
  reduceAddF32,
  select,
  sub,
  uint32,
  uint8,
  type BlockBuilder,
  type Expr,
  type Target,
} from '@tilekit/codegen';
import { emitCalculateOffset } from '@tilekit/layout';
import { MmaSyncBlockGemmSs, type MmaSyncBlockGemmState, type WgmmaSmemLayout } from '@tilekit/gemm';
import {
  clearTile,
  makeDistributedTensor,
  makeTileWindow,
  storeTile,
  sweepTile,
  type BlockEmitter,
  type DistributedTensor,
  type TensorView,
  type ThreadScope,
  type TileDistributionEncoding,
} from '@tilekit/tile';
import type { GenericAttentionMaskCode } from '../mask/genericAttentionMaskCode.ts';
import {
  emitSplitDCopyTile,
  emitSplitDRingStep,
  emitSplitDSetup,
  splitDNestedEmitter,
  type SplitDEmitContextBase,
} from './emitSplitDRingStep.ts';
import { splitDRingPrologueLoads } from './fmhaFwdSm80SplitDPipeline.ts';
import { FmhaSm80TileCopy } from './fmhaSm80TileCopy.ts';
import { checkSplitDOperands, isMultipleIn, splitDPolicyError } from './splitDPolicyError.ts';

/** Policy of {@link FmhaBwdSm80SplitDPipeline} (the dq_dk_dv kernel of FFPA's backward on sm_80). */
export interface FmhaBwdSm80SplitDPolicy {
  /** Q/K/V/dO/dK/dV element type (fp32 accumulation, fp32 dQ workspace). */
  readonly dtype: 'fp16' | 'bf16';
  /** Head dim of Q and K: a multiple of 64 in [64, 1024] (S = Q·Kᵀ streamed in 64-column chunks). */
  readonly headDim: number;
  /** Head dim of V and dO: a multiple of 64 in [64, 1024] (dP = dO·Vᵀ streamed in 64-column chunks). */
  readonly headDimV: number;
  /** Query rows per step: 64 (4 warps of 16 rows along M; 2 warps along N). */
  readonly tileM: number;
  /** Key rows per block: 64 (dK, dV of these keys stay in registers). */
  readonly tileN: number;
  /**
   * Columns of dK/dQ (over d) and of dV (over d_v) one block owns: 64 or 128. dK and dV of the
   * block's 64 keys × `sliceWidth` columns are fp32 registers (sliceWidth / 4 each per thread).
   */
  readonly sliceWidth: number;
  /** Depth of the cp.async ring (each slot: up to three 64 × 64 tiles): 2 or 3 (one stage spills registers at sliceWidth 128). */
  readonly stages: number;
}

/** Columns of every chunk of the ring (a 128-byte swizzle row of a 16-bit type). */
export const FMHA_BWD_SM80_SPLIT_D_CHUNK = 64;

/** A policy rule broken: a `BlockGemmPolicyError` naming the field of the split-D backward pipeline. */
const policyError = (what: string, rule: string, found: unknown): never =>
  splitDPolicyError('FmhaBwdSm80SplitDPipeline', what, rule, found);

/** Checks a policy's fields in order: dtype, head dims, tileM, tileN, sliceWidth, stages. */
function checkFmhaBwdSm80SplitDPolicy(policy: FmhaBwdSm80SplitDPolicy): void {
  const { dtype, headDim, headDimV, tileM, tileN, sliceWidth, stages } = policy;
  checkSplitDOperands('FmhaBwdSm80SplitDPipeline', dtype, headDim);
  if (!isMultipleIn(headDimV, 64, 64, 1024)) policyError('headDimV', 'must be a multiple of 64 in [64, 1024]', headDimV);
  if (tileM !== 64) policyError('tileM', 'must be 64 (4 warps of 16 rows along M)', tileM);
  if (tileN !== 64) policyError('tileN', 'must be 64 (4 warps of 16 key rows along M for dK, dV)', tileN);
  if (sliceWidth !== 64 && sliceWidth !== 128)
    policyError('sliceWidth', 'must be 64 or 128 (dK and dV are sliceWidth / 4 fp32 registers per thread each)', sliceWidth);
  if (stages !== 2 && stages !== 3) policyError('stages', 'must be 2 or 3', stages);
}

/**
 * The columns column slice `slice` owns: dK/dQ columns [k0, k1) of [0, headDim) and dV columns
 * [v0, v1) of [0, headDimV), each `width` wide or cut at the head dim (possibly empty: a slice past
 * d_v owns dK columns only, and the other way round).
 */
export interface SplitDBwdSlice {
  readonly k: readonly [number, number];
  readonly v: readonly [number, number];
}

/** Column slices of a (d, d_v) problem: ⌈max(d, d_v) / width⌉; slice s owns columns [s·width, (s + 1)·width) of both, cut at d and d_v. */
export function splitDBwdSliceCount(headDim: number, headDimV: number, width: number): number {
  return Math.ceil(Math.max(headDim, headDimV) / width);
}

/** The columns of slice `slice` (see {@link SplitDBwdSlice}). */
export function splitDBwdSliceOf(slice: number, headDim: number, headDimV: number, width: number): SplitDBwdSlice {
  const c0 = slice * width;
  const cut = (n: number): readonly [number, number] => [Math.min(c0, n), Math.min(c0 + width, n)];
  return { k: cut(headDim), v: cut(headDimV) };
}

/** What one ring load of the backward is. */
export interface SplitDBwdLoad {
  /** The (query head, query tile) step of the block it belongs to (head-major: t = headIndex · queryTiles + queryTile). */
  readonly tile: number;
  /**
   * `qk`: Q[:, c] and K[:, c] (for S); `dov`: dO[:, c] and V[:, c] (for dP); `col`: chunk u of the
   * block's slice: Q[:, cols], dO[:, cols], K[:, cols] (each only where the slice has such columns).
   */
  readonly kind: 'qk' | 'dov' | 'col';
  readonly chunk: number;
  readonly slot: number;
}

/**
 * The schedule of the ring: each (query head, query tile) step consumes `qkChunks` Q/K chunks,
 * `vChunks` dO/V chunks, then `sliceChunks` column chunks; load g is in slot g mod stages. The
 * emitted code computes the same decode from `int` expressions.
 */
export function splitDBwdLoadOf(g: number, qkChunks: number, vChunks: number, sliceChunks: number, stages: number): SplitDBwdLoad {
  const steps = qkChunks + vChunks + sliceChunks;
  const tile = Math.floor(g / steps);
  const local = g - tile * steps;
  const slot = g % stages;
  if (local < qkChunks) return { tile, kind: 'qk', chunk: local, slot };
  if (local < qkChunks + vChunks) return { tile, kind: 'dov', chunk: local - qkChunks, slot };
  return { tile, kind: 'col', chunk: local - qkChunks - vChunks, slot };
}

/** The shared-memory plan: a ring of slots of three 64 × 64 tiles (A | B | C), then the P and dS tiles. */
export interface SplitDBwdSharedPlan {
  /** Bytes of one 64 × 64 tile (every tile of the plan). */
  readonly tileBytes: number;
  /** Offsets of the B and C tiles inside a slot. */
  readonly bOffset: number;
  readonly cOffset: number;
  readonly slotBytes: number;
  /** Offsets of the P and dS tiles (after the ring). */
  readonly pOffset: number;
  readonly dsOffset: number;
  readonly usedBytes: number;
  /** Dynamic shared memory to request (used + 1024 bytes of alignment slack). */
  readonly sharedBytes: number;
}

/** The plan for `stages` slots of 64 × 64 tiles of `tileBytes` each, + the P and dS tiles: independent of d and d_v. */
export function splitDBwdSharedPlan(tileBytes: number, stages: number): SplitDBwdSharedPlan {
  const slotBytes = 3 * tileBytes;
  const pOffset = stages * slotBytes;
  const usedBytes = pOffset + 2 * tileBytes;
  return Object.freeze({
    tileBytes,
    bOffset: tileBytes,
    cOffset: 2 * tileBytes,
    slotBytes,
    pOffset,
    dsOffset: pOffset + tileBytes,
    usedBytes,
    sharedBytes: usedBytes + 1024,
  });
}

/**
 * One 32-bit store of a thread's P or dS pair: accumulators d, d + 1 (adjacent keys of one query
 * row; `row` 0 or 1 of the thread's two rows) go to byte (base ^ xor) + add of the tile, base the
 * thread's offset of accumulator 0.
 */
export interface SplitDBwdPairStore {
  readonly d: number;
  readonly row: number;
  readonly xor: number;
  readonly add: number;
}

/**
 * The pair stores of S's C distribution `enc` into the keys-contiguous P/dS tile `layout`
 * ((mn = key, k = query)): pair (d, d + 1) of row half h (d mod 4 = 2h) at (base ^ xor) + add, add
 * the byte offset of 8 rows down for h = 1, xor the 16-byte chunk bits the pair's key offset flips
 * (read off thread 0). Checked for every thread and pair against the layout (the pair's keys
 * adjacent, the formula exact); throws a BlockGemmPolicyError if not.
 */
export function splitDBwdPdsStores(enc: TileDistributionEncoding, layout: WgmmaSmemLayout, threads: number): readonly SplitDBwdPairStore[] {
  const e = layout.elementBytes;
  const byteOf = (x: readonly number[]): number => layout.descriptor.calculateOffset([x[1]!, x[0]!]) * e;
  const size = enc.threadBufferSize;
  // Thread 0 fixes each pair's xor (the 16-byte chunk bits its key offset flips) and add (8 rows down for the second row).
  const ps0 = enc.partitionIndexOf(0);
  const base0 = byteOf(enc.calculateXIndexFromD(ps0, 0));
  const stores: SplitDBwdPairStore[] = [];
  for (let d = 0; d < size; d += 2) {
    const h = (d >> 1) & 1;
    const add = byteOf([8, 0]) * h;
    stores.push({ d, row: h, xor: (byteOf(enc.calculateXIndexFromD(ps0, d)) - add) ^ base0, add });
  }
  for (let tid = 0; tid < threads; tid++) {
    const ps = enc.partitionIndexOf(tid);
    const base = byteOf(enc.calculateXIndexFromD(ps, 0));
    const row0 = enc.calculateXIndexFromD(ps, 0)[0]!;
    for (const st of stores) {
      const x0 = enc.calculateXIndexFromD(ps, st.d);
      const x1 = enc.calculateXIndexFromD(ps, st.d + 1);
      const ok =
        x0[0] === row0 + 8 * st.row &&
        x1[0] === x0[0] &&
        x1[1] === x0[1]! + 1 &&
        byteOf(x0) === (base ^ st.xor) + st.add &&
        byteOf(x1) === byteOf(x0) + e;
      if (!ok)
        policyError(
          'P/dS stores',
          'each accumulator pair must be two adjacent keys at (base ^ xor) + add of the tile',
          `thread ${tid}, d ${st.d}`,
        );
    }
  }
  return Object.freeze(stores);
}

/** What the kernel hands the pipeline: its values as expressions. */
export interface FmhaBwdSm80SplitDArgs {
  /** K as [seqlenK, headDim] and V as [seqlenK, headDimV] views of the block's key head (head dim contiguous, rows 16-byte aligned). */
  readonly k: TensorView;
  readonly v: TensorView;
  /** Q ([seqlenQ, headDim]) and dO ([seqlenQ, headDimV]) views of query head `head` (emitted into `b`). */
  readonly q: (b: BlockBuilder, head: Expr) => TensorView;
  readonly dO: (b: BlockBuilder, head: Expr) => TensorView;
  /** `float*` of query head `head`'s natural-log LSE and Delta = rowsum(dO∘O) at row 0 (stride 1). */
  readonly lseRow: (b: BlockBuilder, head: Expr) => Expr;
  readonly dRow: (b: BlockBuilder, head: Expr) => Expr;
  /** `float*` of query head `head`'s fp32 dQ accumulator at row 0 (row stride headDim; atomically added). */
  readonly dqRow: (b: BlockBuilder, head: Expr) => Expr;
  /** dK ([seqlenK, headDim]) and dV ([seqlenK, headDimV]) of the block's key head. */
  readonly dk: TensorView;
  readonly dv: TensorView;
  readonly seqlenQ: Expr;
  readonly seqlenK: Expr;
  /** `int` first key row of the block's key tile. */
  readonly n0: Expr;
  /** `int` the block's column slice. */
  readonly slice: Expr;
  /** `int` the query heads that read this key head (GQA): [firstHead, firstHead + headCount). */
  readonly firstHead: Expr;
  readonly headCount: Expr;
  /** `float` softmax scale and scale · log2 e. */
  readonly scale: Expr;
  readonly scaleLog2: Expr;
  readonly mask: GenericAttentionMaskCode;
  readonly symbols: Readonly<Record<string, Expr>>;
}

/** log2 e: the natural-log LSE in the exp2 domain. */
const LOG2E = 1.4426950408889634;

/** What the steps of {@link FmhaBwdSm80SplitDPipeline.emit} share. */
interface BwdEmitContext extends SplitDEmitContextBase<FmhaBwdSm80SplitDArgs> {
  readonly qStart: Expr;
  readonly qTiles: Expr;
  readonly tiles: Expr;
  readonly qkState: MmaSyncBlockGemmState;
  readonly kvState: MmaSyncBlockGemmState;
  readonly dqState: MmaSyncBlockGemmState;
  readonly sAcc: DistributedTensor;
  readonly dpAcc: DistributedTensor;
  readonly dqAcc: DistributedTensor;
  readonly dkAcc: readonly DistributedTensor[];
  readonly dvAcc: readonly DistributedTensor[];
  /** `int` first 64-column chunk of the block's slice. */
  readonly chunk0: Expr;
  /** `int` the thread's P/dS tile byte offset of its accumulator 0 (see `pdsStores`). */
  readonly pdsBase: Expr;
}

/**
 * The sm_80 attention backward (dQ, dK, dV) for large head dims, FFPA-style: S and dP recomputed
 * with Q·Kᵀ and dO·Vᵀ streamed in 64-column chunks of d and d_v through a cp.async ring, mma.sync
 * m16n8k16 with ldmatrix from XOR-swizzled shared memory (8 warps, [4, 2] over M and N of every
 * GEMM: 256 threads), and shared memory that does not grow with d (64 KiB + 1 KiB of alignment
 * slack with 2 stages). Built for sm_90a it runs on Hopper.
 *
 * A block owns 64 keys [n0, n0 + 64) of one key head and one column slice s (see
 * {@link splitDBwdSliceOf}: dK/dQ columns [s·w, (s + 1)·w) ∩ [0, d), dV columns the same range
 * ∩ [0, d_v), w = sliceWidth). dK and dV of its keys × its columns stay in fp32 registers
 * (sliceWidth / 4 each per thread) across every query head of the key head's GQA group and every query tile the mask
 * leaves (`getTileRangeAlongY`). Per (query head, query tile of 64 rows), in ring steps:
 * 1. S = Σ over the d / 64 chunks c of Q[:, c]·K[:, c]ᵀ (runtime loop).
 * 2. dP = Σ over the d_v / 64 chunks of dO[:, c]·V[:, c]ᵀ (runtime loop).
 * 3. Mask on edge tiles (S = −∞); P = 2^(S·scale·log2 e − LSE·log2 e) (0 for rows outside the
 *    sequence and rows whose LSE is −∞); dS = P∘(dP − Delta). P and dS are written (16-bit) to
 *    their shared tiles, keys contiguous (the A operand of Pᵀ·… and dSᵀ·…).
 * 4. For each 64-column chunk u of the slice (statically unrolled; skipped where the slice has no
 *    such column): dV[u] += Pᵀ·dO[:, cols], dK[u] += dSᵀ·Q[:, cols], and dQ[:, cols] = dS·K[:, cols]
 *    (dS read back from its tile, K-major: the same bytes), added with `red.global.add.f32`
 *    (× scale) to the fp32 dQ workspace. S, dP and dS are dead by then: registers hold dK, dV
 *    and one 64-column dQ chunk.
 * At the end dK *= scale; dK and dV are stored (rows inside the sequence).
 *
 * Ring: `stages` slots of three 64 × 64 tiles; loads are consumed in {@link splitDBwdLoadOf}'s
 * order, each its own cp.async group (empty past the last step), with the forward's ring protocol
 * (`splitDRingStep`: wait, `__syncthreads`, issue the load stages − 1 ahead, compute). P and dS
 * are written after the last dP step and before the first column step's barrier, and read only by
 * the column steps; the next write comes after the next tile's first step's barrier, so every warp
 * has read them by then (the spec checks both orders on a model and in the emitted code).
 */
export class FmhaBwdSm80SplitDPipeline {
  readonly policy: FmhaBwdSm80SplitDPolicy;
  /** Name tags of the policy's own fields for an instance key. */
  readonly keyTags = Object.freeze({ sliceWidth: 'w', stages: 's' });
  /** Warps along M and N of every block GEMM (8 warps: [4, 2]). */
  readonly warps = Object.freeze([4, 2] as const);
  readonly threads = 256;
  /** S += Q[:, c]·K[:, c]ᵀ and dP += dO[:, c]·V[:, c]ᵀ: 64 queries × 64 keys, K-major A and B. */
  readonly qk: MmaSyncBlockGemmSs;
  /** dV += Pᵀ·dO[:, cols], dK += dSᵀ·Q[:, cols]: 64 keys × 64 columns over 64 queries; A (keys contiguous) and B (columns contiguous) MN-major. */
  readonly kv: MmaSyncBlockGemmSs;
  /**
   * dQ[:, cols] = dS·K[:, cols]: 64 queries × 64 columns over 64 keys; A = the dS tile read back
   * K-major (the same bytes as the dK GEMM's MN-major dSᵀ: checked), B columns-contiguous.
   */
  readonly dq: MmaSyncBlockGemmSs;
  readonly qkChunks: number;
  readonly vChunks: number;
  readonly sliceChunks: number;
  /** Column slices of the problem (blocks along the slices). */
  readonly slices: number;
  readonly copyEncoding: TileDistributionEncoding;
  /** How a thread writes its P/dS pairs: byte (base ^ xor) + add of its pair's tile, checked for every thread. */
  readonly pdsStores: readonly SplitDBwdPairStore[];
  readonly shared: SplitDBwdSharedPlan;
  readonly sharedBytes: number;
  readonly #copy: FmhaSm80TileCopy;

  constructor(policy: FmhaBwdSm80SplitDPolicy) {
    checkFmhaBwdSm80SplitDPolicy(policy);
    const { dtype, headDim, headDimV, sliceWidth } = policy;
    this.policy = Object.freeze({ ...policy });
    const warps = this.warps;
    const C = FMHA_BWD_SM80_SPLIT_D_CHUNK;
    this.qk = new MmaSyncBlockGemmSs({ dtype, tileM: 64, tileN: 64, tileK: C, warps, aMajor: 'K', bMajor: 'K' });
    this.kv = new MmaSyncBlockGemmSs({ dtype, tileM: 64, tileN: C, tileK: 64, warps, aMajor: 'MN', bMajor: 'MN' });
    this.dq = new MmaSyncBlockGemmSs({ dtype, tileM: 64, tileN: C, tileK: 64, warps, aMajor: 'K', bMajor: 'MN' });
    for (let query = 0; query < 64; query++)
      for (let key = 0; key < 64; key++)
        if (this.kv.aLayout.descriptor.calculateOffset([key, query]) !== this.dq.aLayout.descriptor.calculateOffset([query, key]))
          policyError('dS tile', "must be the dK GEMM's MN-major A and the dQ GEMM's K-major A at once", `(${query}, ${key})`);
    this.qkChunks = headDim / C;
    this.vChunks = headDimV / C;
    this.sliceChunks = sliceWidth / C;
    this.slices = splitDBwdSliceCount(headDim, headDimV, sliceWidth);
    this.#copy = new FmhaSm80TileCopy('FmhaBwdSm80SplitDPipeline', this.threads / 32);
    this.copyEncoding = this.#copy.encoding('copy tile', 64, C);
    const layouts = [this.qk.aLayout, this.qk.bLayout, this.kv.aLayout, this.kv.bLayout, this.dq.bLayout];
    const tileBytes = this.qk.aTileBytes;
    for (const layout of layouts)
      if (layout.bytes !== tileBytes || tileBytes % layout.repeatBytes !== 0)
        policyError('shared tiles', `must all be ${tileBytes} bytes, a multiple of their swizzle repeat`, layout.bytes);
    this.pdsStores = splitDBwdPdsStores(this.qk.cEncoding, this.kv.aLayout, this.threads);
    this.shared = splitDBwdSharedPlan(tileBytes, policy.stages);
    this.sharedBytes = this.shared.sharedBytes;
  }

  /** Ring steps per (query head, query tile): Q/K chunks, dO/V chunks, the slice's column chunks. */
  get stepsPerTile(): number {
    return this.qkChunks + this.vChunks + this.sliceChunks;
  }

  /** Key tiles (blocks along x per slice) of a sequence of `seqlenK` keys. */
  keyTiles(seqlenK: number): number {
    return Math.ceil(seqlenK / this.policy.tileN);
  }

  /** Emits the whole kernel body into `b`. */
  emit(b: BlockBuilder, target: Target, args: FmhaBwdSm80SplitDArgs): void {
    const P = this.policy;
    const S = this.shared;
    const plan =
      `dynamic shared memory, aligned up to 1024 bytes: a ring of ${P.stages} slots of ${S.slotBytes} B ` +
      `(three ${S.tileBytes} B tiles: Q|K, dO|V or Q|dO|K chunks), then P and dS (${S.tileBytes} B each)`;
    const { tid, smem, block } = emitSplitDSetup(b, target, this.threads, args.symbols, plan);
    b.comment('the query tiles this key tile meets (the mask decides), for every query head of the group');
    const range = args.mask.getTileRangeAlongY(args.n0, P.tileN, P.tileM);
    const qStart = b.let('q_start', int32, range.start);
    const qTiles = b.let('q_tiles', int32, maxOf(div(sub(range.end, qStart), P.tileM), 0));
    const tiles = b.let('steps_total', int32, mul(qTiles, args.headCount));
    const chunk0 = b.let('chunk0', int32, mul(args.slice, this.sliceChunks));
    const acc = (name: string, enc: TileDistributionEncoding) => makeDistributedTensor(block, name, enc, float32);
    const ctx: BwdEmitContext = {
      b,
      target,
      args,
      block,
      smem,
      qStart,
      qTiles,
      tiles,
      qkState: this.qk.emitSetup(b, block.indexEmitter, tid),
      kvState: this.kv.emitSetup(b, block.indexEmitter, tid),
      dqState: this.dq.emitSetup(b, block.indexEmitter, tid),
      sAcc: acc('s_acc', this.qk.cEncoding),
      dpAcc: acc('dp_acc', this.qk.cEncoding),
      dqAcc: acc('dq_acc', this.dq.cEncoding),
      dkAcc: Array.from({ length: this.sliceChunks }, (_, u) => acc(`dk_acc${u}`, this.kv.cEncoding)),
      dvAcc: Array.from({ length: this.sliceChunks }, (_, u) => acc(`dv_acc${u}`, this.kv.cEncoding)),
      chunk0,
      pdsBase: b.declare('pds_base', int32, 0, { storage: 'mutable' }),
    };
    block.threads((t) => {
      for (const x of [...ctx.dkAcc, ...ctx.dvAcc]) clearTile(t, x);
      t.b.comment("the P/dS tile byte offset of the thread's accumulator 0; the others are (base ^ xor) + add");
      sweepTile(t, ctx.sAcc, (e) => {
        if (e.d !== 0) return;
        const layout = this.kv.aLayout;
        const { offset } = emitCalculateOffset(e.b, layout.descriptor, [e.x[1]!, e.x[0]!], t.block.indexEmitter);
        e.b.assign(ctx.pdsBase, mul(offset, layout.elementBytes));
      });
    });
    const prologue = splitDRingPrologueLoads(P.stages);
    if (prologue > 0) {
      b.comment(`prologue: loads 0 … ${prologue - 1} of the ring, one cp.async group each`);
      for (let g = 0; g < prologue; g++) this.#issueLoad(ctx, block, g);
    }
    const steps = this.stepsPerTile;
    block.forRange({ name: 'it', to: tiles, unroll: 1 }, (lb, it) => {
      const l = lb.b;
      const head = l.let('head', int32, add(args.firstHead, div(it, qTiles)));
      const m0 = l.let('m0', int32, add(qStart, mul(mod(it, qTiles), P.tileM)));
      const g0 = l.let('g0', int32, mul(it, steps));
      l.comment(`S = Σ over ${this.qkChunks} head-dim chunks of Q[:, c]·K[:, c]ᵀ`);
      lb.threads((t) => clearTile(t, ctx.sAcc));
      this.#gemmSteps(ctx, lb, g0, this.qkChunks, 'c', ctx.sAcc);
      l.comment(`dP = Σ over ${this.vChunks} chunks of dO[:, c]·V[:, c]ᵀ`);
      lb.threads((t) => clearTile(t, ctx.dpAcc));
      this.#gemmSteps(ctx, lb, add(g0, this.qkChunks), this.vChunks, 'cv', ctx.dpAcc);
      this.#emitP(ctx, lb, head, m0);
      this.#emitDs(ctx, lb, head, m0);
      const dqRow = args.dqRow(l, head);
      for (let u = 0; u < this.sliceChunks; u++) {
        const g = l.let(`g_col${u}`, int32, add(g0, this.qkChunks + this.vChunks + u));
        const kc = l.let(`col_chunk${u}`, int32, add(chunk0, u));
        l.comment(`column chunk ${u} of the slice: dV += Pᵀ·dO[:, cols], dK += dSᵀ·Q[:, cols], dQ[:, cols] += dS·K[:, cols]`);
        this.#emitStep(ctx, lb, g, (slot) => this.#emitColumnChunk(ctx, lb, u, kc, slot, m0, dqRow));
      }
    });
    b.expr(cpAsyncWaitGroup(target, 0));
    this.#emitStores(ctx);
  }

  /** A runtime loop of `count` ring steps from `g0`, each acc += A·Bᵀ of the qk GEMM from the slot's A and B tiles. */
  #gemmSteps(ctx: BwdEmitContext, lb: BlockEmitter, g0: Expr, count: number, name: string, acc: DistributedTensor): void {
    lb.forRange({ name, to: count, unroll: 1 }, (cb, c) => {
      const g = cb.b.let('g', int32, add(g0, c));
      this.#emitStep(ctx, cb, g, (slot) => {
        const aTile = cb.b.let('a_tile', pointer(uint8), slot);
        const bTile = cb.b.let('b_tile', pointer(uint8), add(slot, this.shared.bOffset));
        this.qk.emitMma(cb.b, ctx.target, acc, ctx.qkState, { aTile, bTile });
      });
    });
  }

  /** One ring step g: `splitDRingStep`'s waits, barriers and load issue around `compute` (given the slot's `uint8*`). */
  #emitStep(ctx: BwdEmitContext, lb: BlockEmitter, g: Expr, compute: (slot: Expr) => void): void {
    emitSplitDRingStep(ctx, this, lb, g, (load) => this.#issueLoad(ctx, lb, load), compute);
  }

  /**
   * After S and dP: the mask on S, P = 2^(S·scale·log2 e − LSE·log2 e) (0 for rows outside the
   * sequence and rows whose LSE is −∞) into S's registers (fp32) and the P tile (16-bit pairs,
   * keys contiguous).
   */
  #emitP(ctx: BwdEmitContext, lb: BlockEmitter, head: Expr, m0: Expr): void {
    const { args, target, sAcc } = ctx;
    const P = this.policy;
    const l = lb.b;
    const lse = args.lseRow(l, head);
    l.comment('the mask, on the tiles that need it (keys past seqlen_k included)');
    l.if(args.mask.isEdgeTile(m0, args.n0, P.tileM, P.tileN), (mb) => {
      splitDNestedEmitter(ctx, this.threads, mb, lb).threads((t) =>
        sweepTile(t, sAcc, (e) => {
          e.b.if(args.mask.isMasked(add(m0, e.x[0]!), add(args.n0, e.x[1]!)), (z) =>
            z.assign(e.value, infinity(float32, { negative: true })),
          );
        }),
      );
    });
    lb.threads((t) => {
      const tb = t.b;
      const rowLse = this.#rowValues(t, ctx, m0, 'lse_log2', (inSeq, at) => {
        const raw = tb.let('lse_raw', float32, index(lse, at));
        // Rows outside the sequence and fully masked rows (LSE −∞) get P = 2^(… − ∞) = 0.
        const keep = and(inSeq, lt(infinity(float32, { negative: true }), raw));
        return select(keep, mul(raw, cast(LOG2E, float32)), infinity(float32));
      });
      tb.comment('P into S and the P tile (16-bit pairs; (mn = key, k = query) of the dK/dV GEMM A layout)');
      const pTile = tb.let('p_tile', pointer(uint8), add(ctx.smem, this.shared.pOffset));
      for (const st of this.pdsStores) {
        const p = [0, 1].map((i) => {
          const d = st.d + i;
          const v = tb.let(`p${i}`, float32, exp2Approx(target, sub(mul(sAcc.at(t, d), args.scaleLog2), rowLse[st.row]!)));
          tb.assign(sAcc.at(t, d), v);
          return v;
        });
        tb.assign(index(cast(add(pTile, this.#pairByte(ctx, st)), pointer(uint32)), 0), packFloat2(target, P.dtype, p[0]!, p[1]!));
      }
    });
  }

  /** Then dS = P∘(dP − Delta) into the dS tile (16-bit pairs, keys contiguous). */
  #emitDs(ctx: BwdEmitContext, lb: BlockEmitter, head: Expr, m0: Expr): void {
    const { args, target, dpAcc } = ctx;
    const l = lb.b;
    const delta = args.dRow(l, head);
    lb.threads((t) => {
      const tb = t.b;
      const rowDelta = this.#rowValues(t, ctx, m0, 'delta', (inSeq, at) => select(inSeq, index(delta, at), cast(0, float32)));
      tb.comment('dS = P∘(dP − Delta) into the dS tile');
      const dsTile = tb.let('ds_tile', pointer(uint8), add(ctx.smem, this.shared.dsOffset));
      for (const st of this.pdsStores) {
        const ds = [0, 1].map((i) => mul(ctx.sAcc.at(t, st.d + i), sub(dpAcc.at(t, st.d + i), rowDelta[st.row]!)));
        tb.assign(
          index(cast(add(dsTile, this.#pairByte(ctx, st)), pointer(uint32)), 0),
          packFloat2(target, this.policy.dtype, ds[0]!, ds[1]!),
        );
      }
    });
  }

  /**
   * The calling thread's two rows' values (the S/dP C distribution: accumulators 4j, 4j + 1 are row
   * r, 4j + 2, 4j + 3 row r + 8), `value(inSeq, clampedRow)` each: index 0 for row r, 1 for r + 8.
   */
  #rowValues(t: ThreadScope, ctx: BwdEmitContext, m0: Expr, name: string, value: (inSeq: Expr, at: Expr) => Expr): Expr[] {
    const out: Expr[] = [];
    sweepTile(t, ctx.sAcc, (e) => {
      if (e.d !== 0 && e.d !== 2) return;
      const row = e.b.let(`${name}_row${e.d >> 1}`, int32, add(m0, e.x[0]!));
      const inSeq = lt(row, ctx.args.seqlenQ);
      out[e.d >> 1] = e.b.let(`${name}${e.d >> 1}`, float32, value(inSeq, select(inSeq, row, 0)));
    });
    return out;
  }

  /** `int` byte offset in a P/dS tile of the thread's pair `st`: (base ^ xor) + add. */
  #pairByte(ctx: BwdEmitContext, st: SplitDBwdPairStore): Expr {
    return add(st.xor === 0 ? ctx.pdsBase : bitXor(ctx.pdsBase, st.xor), st.add);
  }

  /** Column chunk u (chunk `kc` of the head dims): dK, dQ where kc < d / 64; dV where kc < d_v / 64. */
  #emitColumnChunk(ctx: BwdEmitContext, lb: BlockEmitter, u: number, kc: Expr, slot: Expr, m0: Expr, dqRow: Expr): void {
    const { target, args } = ctx;
    const P = this.policy;
    const l = lb.b;
    const pTile = add(ctx.smem, this.shared.pOffset);
    const dsTile = add(ctx.smem, this.shared.dsOffset);
    l.if(lt(kc, this.vChunks), (vb) => {
      vb.comment('dV[u] += Pᵀ·dO[:, cols]');
      this.kv.emitMma(vb, target, ctx.dvAcc[u]!, ctx.kvState, { aTile: pTile, bTile: add(slot, this.shared.bOffset) });
    });
    l.if(lt(kc, this.qkChunks), (kb) => {
      kb.comment('dK[u] += dSᵀ·Q[:, cols]');
      this.kv.emitMma(kb, target, ctx.dkAcc[u]!, ctx.kvState, { aTile: dsTile, bTile: slot });
      kb.comment('dQ[:, cols] = dS·K[:, cols], added (× scale) to the fp32 workspace');
      const ke = splitDNestedEmitter(ctx, this.threads, kb, lb);
      ke.threads((t) => clearTile(t, ctx.dqAcc));
      this.dq.emitMma(kb, target, ctx.dqAcc, ctx.dqState, { aTile: dsTile, bTile: add(slot, this.shared.cOffset) });
      const col0 = kb.let('dq_col0', int32, mul(kc, FMHA_BWD_SM80_SPLIT_D_CHUNK));
      ke.threads((t) =>
        sweepTile(t, ctx.dqAcc, (e) => {
          const row = e.b.let('dq_r', int32, add(m0, e.x[0]!));
          e.b.if(lt(row, args.seqlenQ), (s) =>
            s.expr(
              reduceAddF32(
                target,
                addressOf(index(dqRow, add(mul(cast(row, int64), P.headDim), cast(add(col0, e.x[1]!), int64)))),
                mul(e.value, args.scale),
              ),
            ),
          );
        }),
      );
    });
  }

  /** dK *= scale; dK, dV chunks of the slice stored (rows inside the sequence; chunks inside the head dims). */
  #emitStores(ctx: BwdEmitContext): void {
    const { b, block, args } = ctx;
    b.comment('epilogue: dK *= scale; the slice’s dK and dV chunks stored (predicated on the key rows)');
    for (let u = 0; u < this.sliceChunks; u++) {
      const kc = b.let(`out_chunk${u}`, int32, add(ctx.chunk0, u));
      for (const [what, limit, view, acc, scaled] of [
        ['dK', this.qkChunks, args.dk, ctx.dkAcc[u]!, true],
        ['dV', this.vChunks, args.dv, ctx.dvAcc[u]!, false],
      ] as const) {
        b.if(lt(kc, limit), (sb) => {
          sb.comment(`${what} chunk ${u}`);
          const se = splitDNestedEmitter(ctx, this.threads, sb, block);
          const w = makeTileWindow(se, {
            view,
            lengths: [64, FMHA_BWD_SM80_SPLIT_D_CHUNK],
            origin: [args.n0, mul(kc, FMHA_BWD_SM80_SPLIT_D_CHUNK)],
            encoding: this.kv.cEncoding,
            originAlignment: [64, FMHA_BWD_SM80_SPLIT_D_CHUNK],
          });
          se.threads((t) => {
            if (scaled) sweepTile(t, acc, (e) => e.b.assign(e.value, mul(e.value, args.scale)));
            storeTile(t, w, acc);
          });
        });
      }
    }
  }

  /** Issues ring load `g`: decoded into (step, kind, chunk, slot), copied if the step exists; always one group. */
  #issueLoad(ctx: BwdEmitContext, lb: BlockEmitter, g: Expr | number): void {
    const { target, args } = ctx;
    const P = this.policy;
    const S = this.shared;
    const l = lb.b;
    const C = FMHA_BWD_SM80_SPLIT_D_CHUNK;
    const load = l.let('load', int32, g);
    const tile = l.let('load_tile', int32, div(load, this.stepsPerTile));
    const local = l.let('load_step', int32, sub(load, mul(tile, this.stepsPerTile)));
    const dst = l.let('load_dst', pointer(uint8), add(ctx.smem, mul(mod(load, P.stages), S.slotBytes)));
    l.if(lt(tile, ctx.tiles), (ib) => {
      const be = splitDNestedEmitter(ctx, this.threads, ib, lb);
      const head = ib.let('load_head', int32, add(args.firstHead, div(tile, ctx.qTiles)));
      const m0 = ib.let('load_m0', int32, add(ctx.qStart, mul(mod(tile, ctx.qTiles), P.tileM)));
      const copy = (bb: BlockBuilder, view: TensorView, row0: Expr, col0: Expr, layout: WgmmaSmemLayout, at: Expr) =>
        emitSplitDCopyTile(
          this.#copy,
          target,
          splitDNestedEmitter(ctx, this.threads, bb, be),
          view,
          [64, FMHA_BWD_SM80_SPLIT_D_CHUNK],
          [row0, col0],
          this.copyEncoding,
          layout,
          at,
        );
      ib.if(
        lt(local, this.qkChunks),
        (qb) => {
          qb.comment('Q·Kᵀ chunk: Q[m0:, c·64:] and K[n0:, c·64:] (K-major)');
          const col0 = qb.let('load_col0', int32, mul(local, C));
          copy(qb, args.q(qb, head), m0, col0, this.qk.aLayout, dst);
          copy(qb, args.k, args.n0, col0, this.qk.bLayout, add(dst, S.bOffset));
        },
        (rb) => {
          rb.if(
            lt(local, this.qkChunks + this.vChunks),
            (vb) => {
              vb.comment('dO·Vᵀ chunk: dO[m0:, c·64:] and V[n0:, c·64:] (K-major)');
              const col0 = vb.let('load_col0', int32, mul(sub(local, this.qkChunks), C));
              copy(vb, args.dO(vb, head), m0, col0, this.qk.aLayout, dst);
              copy(vb, args.v, args.n0, col0, this.qk.bLayout, add(dst, S.bOffset));
            },
            (cb) => {
              cb.comment("the slice's column chunk: Q[m0:, cols], dO[m0:, cols], K[n0:, cols] (columns contiguous)");
              const kc = cb.let('load_chunk', int32, add(ctx.chunk0, sub(local, this.qkChunks + this.vChunks)));
              const col0 = cb.let('load_col0', int32, mul(kc, C));
              cb.if(lt(kc, this.qkChunks), (kb) => {
                copy(kb, args.q(kb, head), m0, col0, this.kv.bLayout, dst);
                copy(kb, args.k, args.n0, col0, this.dq.bLayout, add(dst, S.cOffset));
              });
              cb.if(lt(kc, this.vChunks), (db) => copy(db, args.dO(db, head), m0, col0, this.kv.bLayout, add(dst, S.bOffset)));
            },
          );
        },
      );
    });
    l.expr(cpAsyncCommitGroup(target));
  }
}
