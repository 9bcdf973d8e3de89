// The per-query-tile steps of the backward's consumer warpgroups (FmhaBwdWsPipeline), in the
// order fmhaBwdWsConsumer.ts issues them; dQ's way into the workspace is fmhaBwdDqAccumulation.ts.
import {
  add,
  bitAnd,
  cast,
  div,
  eq,
  exp2Approx,
  fenceProxyAsyncShared,
  float32,
  gt,
  index,
  infinity,
  int32,
  lit,
  mul,
  namedBarrierSync,
  neg,
  or,
  packFloat2,
  sub,
  uint32,
  type BlockBuilder,
  type Expr,
} from '@tilekit/codegen';
import { emitCalculateOffset } from '@tilekit/layout';
import { clearTile, makeTileWindow, storeTile, sweepTile, type BlockEmitter, type DistributedTensor } from '@tilekit/tile';
import { FMHA_BWD_SLAB_BYTES } from './fmhaBwdWsContext.ts';
import type { FmhaScoreAt } from '../scoreMod/fmhaScoreModifier.ts';
import type { FmhaBwdWsConsumerState, FmhaBwdWsKeyTile, FmhaBwdWsQueryTile } from './fmhaBwdWsConsumerState.ts';

/** Sᵀ = K·Qᵀ (this warpgroup: its 64 key rows), head dim in 64-wide slabs. */
export function emitFmhaBwdScoresT(li: BlockBuilder, st: FmhaBwdWsConsumerState, key: FmhaBwdWsKeyTile, q: FmhaBwdWsQueryTile): void {
  const { pipeline: p, target } = st.ctx;
  li.comment('Sᵀ = K·Qᵀ (this warpgroup: its 64 key rows)');
  emitSlabMmas(li, st, p.sT, st.sAcc, key.kChunk, q.qTile, p.slabsQK);
  p.sT.emitWait(li, target, st.sAcc, 0);
}

/** The mask on edge tiles (−∞ scores); query rows past seqlenQ (the next sequence in group mode) too. */
export function emitFmhaBwdMask(li: BlockBuilder, st: FmhaBwdWsConsumerState, key: FmhaBwdWsKeyTile, q: FmhaBwdWsQueryTile): void {
  const { pipeline: p, args } = st.ctx;
  const { tileM, tileN } = p.policy;
  const { i0 } = q;
  const { j0 } = key;
  li.comment('the mask on edge tiles; query rows past seqlenQ (the next sequence in group mode) too');
  li.if(or(args.mask.isEdgeTile(i0, j0, tileM, tileN), gt(add(i0, tileM), args.seqlenQ)), (mb) =>
    st
      .emitter(mb)
      .threads((t) =>
        sweepTile(t, st.sAcc, (e) =>
          e.b.if(args.mask.isMaskedNonNegative(add(i0, e.x[1]!), add(j0, e.x[0]!)), (z) =>
            z.assign(e.value, infinity(float32, { negative: true })),
          ),
        ),
      ),
  );
}

/**
 * The score modifier's step (when the kernel has one): Sᵀ becomes its log2-domain logits at the
 * query tile's head, before the mask; returns the modifier there (for the probabilities and dSᵀ).
 */
export function emitFmhaBwdScoreModifier(
  li: BlockBuilder,
  inner: BlockEmitter,
  st: FmhaBwdWsConsumerState,
  key: FmhaBwdWsKeyTile,
  q: FmhaBwdWsQueryTile,
): FmhaScoreAt | undefined {
  const { args } = st.ctx;
  if (args.scoreModifier === undefined) return undefined;
  const at = args.scoreModifier.atHead(li, q.head);
  li.comment('the score modifier: Sᵀ becomes its log2-domain logits');
  inner.threads((t) =>
    sweepTile(t, st.sAcc, (e) => e.b.assign(e.value, at.logit(e.b, e.value, add(q.i0, e.x[1]!), add(key.j0, e.x[0]!), args.scaleLog2))),
  );
  return at;
}

/** Pᵀ = 2^(Sᵀ·scale·log2 e − LSE·log2 e) in place of Sᵀ (scale 1 after a score modifier): the forward's probabilities, from its LSE. */
export function emitFmhaBwdProbabilities(inner: BlockEmitter, st: FmhaBwdWsConsumerState, q: FmhaBwdWsQueryTile, at?: FmhaScoreAt): void {
  const { target, args } = st.ctx;
  const scaleLog2 = at === undefined ? args.scaleLog2 : lit(1, float32);
  inner.threads((t) => {
    t.b.comment('Pᵀ = 2^(Sᵀ·scale·log2 e − LSE·log2 e); a fully masked row (LSE = −∞) gives 0');
    sweepTile(t, st.sAcc, (e) => {
      e.b.assign(e.value, exp2Approx(target, add(mul(e.value, scaleLog2), neg(index(q.lseStage, e.x[1]!)))));
    });
  });
}

/**
 * Pᵀ packed to fp16/bf16 pairs, then dV += Pᵀ·dO (register A, dO N-major) and dPᵀ = V·dOᵀ, both
 * waited for. `firstIt` is 0 on the key tile's first query tile (dV starts from Pᵀ·dO).
 */
export function emitFmhaBwdDvAndDpT(
  li: BlockBuilder,
  inner: BlockEmitter,
  st: FmhaBwdWsConsumerState,
  key: FmhaBwdWsKeyTile,
  q: FmhaBwdWsQueryTile,
  firstIt: Expr,
): void {
  const { pipeline: p, target } = st.ctx;
  inner.threads((t) => {
    for (let r = 0; r < p.dvGemm.aRegisters; r++)
      t.b.assign(st.pFrag.at(t, r), packFloat2(target, p.policy.dtype, st.sAcc.at(t, 2 * r), st.sAcc.at(t, 2 * r + 1)));
  });
  li.comment('dV += Pᵀ·dO and dPᵀ = V·dOᵀ (issued after the softmax: the mask then has registers to spare)');
  p.dvGemm.emitMma(li, target, st.dvAcc, st.pFrag, { bTile: q.doTile, accumulate: firstIt, warpgroup: st.wg });
  emitSlabMmas(li, st, p.dpT, st.dpAcc, key.vChunk, q.doTile, p.slabsV);
  p.dpT.emitWait(li, target, st.dpAcc, 0);
  p.dvGemm.emitWait(li, target, st.dvAcc, 0, st.pFrag);
}

/**
 * dSᵀ = scale · Pᵀ ∘ (dPᵀ − D) in place of dPᵀ (D = rowsum(dO ∘ O) from the dot_do_o kernel), times
 * the score modifier's derivative where it has one, packed to pairs.
 */
export function emitFmhaBwdDsT(inner: BlockEmitter, st: FmhaBwdWsConsumerState, q: FmhaBwdWsQueryTile, at?: FmhaScoreAt): void {
  const { pipeline: p, target, args } = st.ctx;
  inner.threads((t) => {
    t.b.comment('dSᵀ = scale · Pᵀ ∘ (dPᵀ − D), packed to fp16/bf16 pairs');
    sweepTile(t, st.dpAcc, (e) => {
      const pds = mul(st.sAcc.at(t, e.d), sub(e.value, index(q.lseStage, add(e.x[1]!, p.policy.tileM))));
      const factor = at?.gradient?.(e.b, st.sAcc.at(t, e.d), index(q.lseStage, e.x[1]!));
      e.b.assign(e.value, mul(factor === undefined ? pds : mul(pds, factor), args.scale));
    });
    for (let r = 0; r < p.dkGemm.aRegisters; r++)
      t.b.assign(st.dsFrag.at(t, r), packFloat2(target, p.policy.dtype, st.dpAcc.at(t, 2 * r), st.dpAcc.at(t, 2 * r + 1)));
  });
}

/** The dSᵀ pairs to shared memory (the M-major A of dQ = dS·K) once both warpgroups finished the previous dQ. */
export function emitFmhaBwdStoreDsT(li: BlockBuilder, st: FmhaBwdWsConsumerState): void {
  const { pipeline: p, target } = st.ctx;
  li.comment('dSᵀ pairs to shared memory once both warpgroups finished the previous dQ');
  li.expr(namedBarrierSync(target, 1, p.consumerThreads));
  const storeDs = (bb: BlockBuilder): void =>
    st.emitter(bb).threads((t) =>
      sweepTile(t, st.dpAcc, (e) => {
        // Elements 2r, 2r + 1 are adjacent queries of one key row: one 32-bit store of packed register r.
        if (e.d % 2 !== 0) return;
        const row = e.b.let('ds_r', int32, bitAnd(e.x[0]!, 63));
        const chunk = e.b.let('ds_c', int32, div(e.x[0]!, 64));
        const { offset } = emitCalculateOffset(e.b, st.dsLayout.descriptor, [e.x[1]!, row], st.block.indexEmitter);
        e.b.assign(index(st.dsPairs, div(add(mul(chunk, st.dsChunkBytes / 2), offset), 2)), st.dsFrag.at(t, e.d / 2));
      }),
    );
  // At head dim 256 both warpgroups hold the same dSᵀ: the first one writes it.
  if (p.wide) li.if(eq(st.wg, 0), storeDs);
  else storeDs(li);
}

/**
 * dK += dSᵀ·Q (register A, Q N-major), then dQ = dS·K (dS M-major from shared memory, K N-major)
 * shared by the two warpgroups per `dqSplit`; both waited for.
 */
export function emitFmhaBwdDkAndDq(
  li: BlockBuilder,
  st: FmhaBwdWsConsumerState,
  key: FmhaBwdWsKeyTile,
  q: FmhaBwdWsQueryTile,
  firstIt: Expr,
): void {
  const { pipeline: p, target } = st.ctx;
  li.comment('dK += dSᵀ·Q, then dQ = dS·K (dS M-major from shared memory, K N-major)');
  p.dkGemm.emitMma(li, target, st.dkAcc, st.dsFrag, { bTile: q.qTile, accumulate: firstIt, warpgroup: st.wg });
  // Head dim 256: dK done (dSᵀ registers free) before dQ's accumulator comes alive.
  if (p.wide) p.dkGemm.emitWait(li, target, st.dkAcc, 0, st.dsFrag);
  li.expr(fenceProxyAsyncShared(target));
  li.expr(namedBarrierSync(target, 2, p.consumerThreads));
  emitDqGemm(li, st, key);
  p.dqGemm.emitWait(li, target, st.dqAcc, 0);
  if (!p.wide) p.dkGemm.emitWait(li, target, st.dkAcc, 0, st.dsFrag);
}

/** dQ = dS·K: a key split gives each warpgroup its own 64-key-row chunk; otherwise both walk every chunk. */
function emitDqGemm(li: BlockBuilder, st: FmhaBwdWsConsumerState, key: FmhaBwdWsKeyTile): void {
  const { pipeline: p, target, smemAddr } = st.ctx;
  const O = p.offsets;
  if (p.dqSplit === 'K') {
    p.dqGemm.emitMma(li, target, st.dqAcc, {
      aTile: li.let('ds_chunk', uint32, add(smemAddr, cast(add(O.ds, mul(st.wg, st.dsChunkBytes)), uint32))),
      bTile: key.kChunk,
      warpgroup: st.wg,
      accumulate: lit(0, int32),
    });
  } else {
    for (let c = 0; c < p.chunks; c++) {
      p.dqGemm.emitMma(li, target, st.dqAcc, {
        aTile: add(smemAddr, O.ds + c * st.dsChunkBytes),
        bTile: add(smemAddr, O.k + c * p.slabsQK * FMHA_BWD_SLAB_BYTES),
        warpgroup: st.wg,
        accumulate: lit(c === 0 ? 0 : 1, int32),
      });
    }
  }
}

/** dK and dV of a key tile (zero when no query row sees it), cast and predicated on rows < seqlenK. */
export function emitFmhaBwdDkDvEpilogue(l: BlockBuilder, st: FmhaBwdWsConsumerState, key: FmhaBwdWsKeyTile): void {
  const { pipeline: p, args } = st.ctx;
  const P = p.policy;
  l.comment('dK and dV of this key tile (zero when no query row sees it), predicated on rows < seqlenK');
  l.if(eq(key.iters, 0), (z) =>
    st.emitter(z).threads((t) => {
      clearTile(t, st.dkAcc);
      clearTile(t, st.dvAcc);
    }),
  );
  const inner = st.emitter(l);
  const dkWindow = makeTileWindow(inner, {
    view: args.dk,
    lengths: [P.tileN, P.headDim],
    origin: [key.j0, 0],
    encoding: p.dkGemm.cEncoding,
    originAlignment: [P.tileN, P.headDim],
  });
  const dvWindow = makeTileWindow(inner, {
    view: args.dv,
    lengths: [P.tileN, P.headDimV],
    origin: [key.j0, 0],
    encoding: p.dvGemm.cEncoding,
    originAlignment: [P.tileN, P.headDimV],
  });
  inner.threads((t) => {
    storeTile(t, dkWindow, st.dkAcc);
    storeTile(t, dvWindow, st.dvAcc);
  });
}

/**
 * acc = A·B over the head dim's 64-wide slabs, each slab's product accumulated onto the previous:
 * slab c of A (key rows) at aBase + c·FMHA_BWD_SLAB_BYTES, of B (query rows) at bBase + c·tileM·128.
 */
function emitSlabMmas(
  li: BlockBuilder,
  st: FmhaBwdWsConsumerState,
  gemm: FmhaBwdWsConsumerState['ctx']['pipeline']['sT'],
  acc: DistributedTensor,
  aBase: Expr,
  bBase: Expr,
  slabs: number,
): void {
  const { pipeline: p, target } = st.ctx;
  for (let c = 0; c < slabs; c++)
    gemm.emitMma(li, target, acc, {
      aTile: add(aBase, c * FMHA_BWD_SLAB_BYTES),
      bTile: add(bBase, c * p.policy.tileM * 128),
      warpgroup: lit(0, int32),
      accumulate: lit(c === 0 ? 0 : 1, int32),
    });
}
