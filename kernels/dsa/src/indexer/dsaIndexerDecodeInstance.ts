// The paged decode indexer (DeepGEMM's fp8_paged_mqa_logits on sm90, built from tilekit's layers):
// logits[b·nextN + r][p] = scale[p] · Σ_h w[b·nextN + r][h] · ReLU(q8[b][r][h] · k8[p]).
import {
  add,
  bitAnd,
  cast,
  declareAlignedDynamicShared,
  div,
  eq,
  float32,
  ge,
  index,
  instanceKey,
  int32,
  int64,
  kernelParam,
  KernelInstance,
  lt,
  mbarrierWaitParity,
  minOf,
  mul,
  pointer,
  sm90a,
  sub,
  uint32,
  maxOf,
  type BlockBuilder,
  type Expr,
  type SourceBuilder,
  type Target,
  infinity,
} from '@tilekit/codegen';
import { DsaArgumentError } from '../dsaArgumentError.ts';
import { DSA_INDEX_HEAD_DIM, DSA_INDEX_HEADS, DSA_NEXT_N, DSA_PAGE_BYTES, DSA_PAGE_SCALE_OFFSET, DSA_PAGE_TOKENS } from '../dsaShape.ts';
import { DsaIndexerTileStep } from './dsaIndexerTileStep.ts';
import { emitDsaKeyRingProducer } from './emitDsaKeyRingProducer.ts';
import { emitDsaRingBarriers, type DsaRingBarriers } from './emitDsaRingBarriers.ts';
import { dsaIndexerCommonParams, dsaIndexerSmem, type DsaIndexerSmem } from './dsaIndexerSmem.ts';

/** The Policy of one decode-indexer instance. */
export interface DsaIndexerDecodePolicy {
  /** Index query heads: 32 or 64. */
  readonly heads: number;
  /** Queries per step: 1 or 2 (MTP). */
  readonly nextN: number;
  /** Depth of the page ring (even: stage s always belongs to consumer warpgroup s mod 2). */
  readonly stages: number;
}

/** Consumer warpgroups (they take alternate pages) and the producer warp's threads. */
const CONSUMERS = 2;
const PRODUCER_THREADS = 32;

/** The kv map's rows per page: a page is 8448 bytes = 66 rows of 128 bytes (64 token rows, then 2 of scales). */
export const DSA_PAGE_ROWS = DSA_PAGE_BYTES / DSA_INDEX_HEAD_DIM;

function decodeParams() {
  const count = { range: [1, 2 ** 31 - 1] as const };
  return {
    ...dsaIndexerCommonParams(),
    block_table: kernelParam.pointer(int32, { const: true, align: 4 }),
    context_lens: kernelParam.pointer(int32, { const: true, align: 4 }),
    max_pages: kernelParam.i32(count),
    logits_stride: kernelParam.i32(count),
    max_context: kernelParam.i32(count),
    pages_per_cta: kernelParam.i32(count),
  };
}

type DecodeParams = ReturnType<typeof decodeParams>;
type DecodeArgs = { readonly [K in keyof DecodeParams]: Expr };

/**
 * One decode-indexer instance (sm_90a). Grid (⌈⌈max_context/64⌉ / pages_per_cta⌉, batch); CTA (x, b)
 * covers pages [x·ppc, (x+1)·ppc) of sequence b's logical pages. Threads: 2 consumer warpgroups, then
 * one producer warp. The producer loads Q [nextN·H, 128] e4m3 once, then each page of the range that
 * holds context (block_table[b][page]) into a ring of `stages`: the 64 token rows (8 KiB, TMA, 128B
 * swizzle) and the 64 fp32 scales. Consumer warpgroup w takes ring steps w, w + 2, …: wgmma fp8
 * m64n(nextN·H)k32 × 4 (A = the page's tokens, B = Q, fp32 accumulator), then the ReLU·w head
 * sum ({@link emitDsaHeadSum}), × the token's scale, −∞ where the position p ≥ context − nextN + r + 1
 * (query r's causal limit), stored to logits[b·nextN + r][p] for p < max_context. Positions of the
 * range past the context get −∞ without a load.
 */
export class DsaIndexerDecodeInstance extends KernelInstance<DsaIndexerDecodePolicy, DecodeParams> {
  protected readonly sourceHeader = { title: 'DSA lightning indexer, paged decode', generator: '@tilekit/kernel-dsa' };
  /** One page × Q: M = 64 tokens, N = nextN·H, K = 128 (e4m3), and its head-sum epilogue. */
  readonly step: DsaIndexerTileStep;
  readonly smem: DsaIndexerSmem;

  constructor(policy: DsaIndexerDecodePolicy, target: Target = sm90a) {
    checkDecodePolicy(policy);
    const n = policy.nextN * policy.heads;
    const threads = CONSUMERS * 128 + PRODUCER_THREADS;
    const key = instanceKey(
      'dsa_indexer_decode',
      { heads: policy.heads, next: policy.nextN, stages: policy.stages, target: target.name },
      { tags: { heads: 'h', next: 'n', stages: 's' } },
    );
    const smem = dsaIndexerSmem(n, policy.stages);
    super({ key, policy: Object.freeze({ ...policy }), target, params: decodeParams(), threads, sharedBytes: smem.used + 1024 });
    this.step = new DsaIndexerTileStep(policy.nextN, policy.heads);
    this.smem = smem;
  }

  /** The grid for `batch` sequences whose logits rows hold `maxContext` positions, `pagesPerCta` pages per CTA. */
  launch(
    batch: number,
    maxContext: number,
    pagesPerCta: number,
  ): { readonly grid: readonly [number, number, number]; readonly block: readonly [number, number, number] } {
    const pages = Math.ceil(maxContext / DSA_PAGE_TOKENS);
    return { grid: [Math.max(1, Math.ceil(pages / pagesPerCta)), batch, 1], block: [this.threads, 1, 1] };
  }

  /** Emits the kernel's entry into `src`. */
  emit(src: SourceBuilder): void {
    const t = this.target;
    const { stages: S, nextN, heads } = this.policy;
    const n = nextN * heads;
    this.signature.defineEntry(src, { launchBounds: { maxThreads: this.threads } }, (b, a) => {
      const tid = b.let('tid', int32, cast(t.threadIdx('x'), int32), { range: [0, this.threads - 1] });
      const seq = b.let('seq', int32, cast(t.blockIdx('y'), int32));
      const ctx = b.let('context', int32, index(a.context_lens, seq));
      const first = b.let('first_page', int32, mul(cast(t.blockIdx('x'), int32), a.pages_per_cta));
      const pagesTotal = b.let('pages_total', int32, div(add(a.max_context, DSA_PAGE_TOKENS - 1), DSA_PAGE_TOKENS));
      const last = b.let('last_page', int32, minOf(add(first, a.pages_per_cta), pagesTotal));
      const pagesCtx = b.let('pages_ctx', int32, div(add(ctx, DSA_PAGE_TOKENS - 1), DSA_PAGE_TOKENS));
      const nLoad = b.let('n_load', int32, maxOf(sub(minOf(last, pagesCtx), first), 0));

      b.comment(
        `shared memory (1024-aligned): Q ${n}x128 e4m3 | ${S} page stages | ${S} scale stages | weights | full[${S}], empty[${S}], q_bar`,
      );
      const { smem, smemAddr } = declareAlignedDynamicShared(b, t, 'dsa_smem');
      const bars = emitDsaRingBarriers(b, t, { tid, base: add(smem, this.smem.barriers), stages: S, emptyWarps: 4 });
      const { full, empty, once: qBar } = bars;
      const weights = b.let('w_smem', pointer(float32), cast(add(smem, this.smem.weights), pointer(float32)));
      const scales = b.let('scale_smem', pointer(float32), cast(add(smem, this.smem.scales), pointer(float32)));
      b.comment("the weights of this sequence's queries: w[(seq·nextN + r)·H + h] at column r·H + h");
      b.forRange({ name: 'c', from: tid, to: n, step: this.threads }, (x, c) =>
        x.assign(index(weights, c), index(a.weights, add(mul(cast(seq, int64), n), cast(c, int64)))),
      );
      b.push(t.syncThreads());

      b.if(
        ge(tid, CONSUMERS * 128),
        (prod) => prod.if(eq(tid, CONSUMERS * 128), (one) => this.emitProducer(one, a, { seq, first, nLoad, bars, smem })),
        (cons) => this.emitConsumers(cons, a, { tid, seq, ctx, first, last, nLoad, full, empty, qBar, smemAddr, weights, scales }),
      );
    });
  }

  private emitProducer(
    b: BlockBuilder,
    a: DecodeArgs,
    v: { seq: Expr; first: Expr; nLoad: Expr; bars: DsaRingBarriers; smem: Expr },
  ): void {
    const n = this.policy.nextN * this.policy.heads;
    emitDsaKeyRingProducer(b, this.target, {
      comment: 'producer: Q once, then each page holding context into the ring',
      maps: { q: a.q_map, kv: a.kv_map, scale: a.scale_map },
      smem: v.smem,
      layout: this.smem,
      bars: v.bars,
      stages: this.policy.stages,
      qRows: n,
      qRow: mul(v.seq, n),
      count: v.nLoad,
      coords: (l, i) => {
        const row = add(mul(cast(v.seq, int64), cast(a.max_pages, int64)), cast(add(v.first, i), int64));
        const page = l.let('page', int32, index(a.block_table, row));
        return { kv: [0, mul(page, DSA_PAGE_ROWS)], scale: [0, page] };
      },
    });
  }

  private emitConsumers(
    b: BlockBuilder,
    a: DecodeArgs,
    v: {
      tid: Expr;
      seq: Expr;
      ctx: Expr;
      first: Expr;
      last: Expr;
      nLoad: Expr;
      full: (s: Expr) => Expr;
      empty: (s: Expr) => Expr;
      qBar: Expr;
      smemAddr: Expr;
      weights: Expr;
      scales: Expr;
    },
  ): void {
    const t = this.target;
    const { stages: S, nextN } = this.policy;
    const wg = b.let('warpgroup', int32, div(v.tid, 128));
    const ltid = b.let('wg_tid', int32, bitAnd(v.tid, 127));
    const { block, acc } = this.step.makeAccumulator(b, t, ltid);
    b.expr(mbarrierWaitParity(t, v.qBar, 0));
    const qTile = b.let('q_tile', uint32, add(v.smemAddr, cast(this.smem.q, uint32)));
    b.forRange({ name: 'i', from: wg, to: v.nLoad, step: CONSUMERS }, (l, i) => {
      const s = l.let('s', int32, bitAnd(i, S - 1));
      l.expr(mbarrierWaitParity(t, v.full(s), cast(bitAnd(div(i, S), 1), uint32)));
      const pos0 = l.let('pos0', int32, mul(add(v.first, i), DSA_PAGE_TOKENS));
      this.step.emit(l, t, {
        block,
        acc,
        tid: ltid,
        kTile: l.let('kv_tile', uint32, add(v.smemAddr, cast(add(this.smem.kv, mul(s, DSA_PAGE_SCALE_OFFSET)), uint32))),
        qTile,
        weight: (col) => index(v.weights, col),
        scale: (row) => index(v.scales, add(mul(s, DSA_PAGE_TOKENS), row)),
        release: v.empty(s),
        store: {
          valid: (row, r) => lt(add(pos0, row), add(sub(v.ctx, nextN - 1), r)),
          target: (row, r) => {
            const pos = add(pos0, row);
            const rowIndex = add(mul(cast(v.seq, int64), nextN), cast(r, int64));
            return {
              at: index(a.logits, add(mul(rowIndex, cast(a.logits_stride, int64)), cast(pos, int64))),
              write: lt(pos, a.max_context),
            };
          },
        },
      });
    });
    this.emitMaskedTail(b, a, v);
  }

  /** −∞ for the range's positions past the loaded pages (no context there), below max_context. */
  private emitMaskedTail(b: BlockBuilder, a: DecodeArgs, v: { tid: Expr; seq: Expr; first: Expr; last: Expr; nLoad: Expr }): void {
    const { nextN } = this.policy;
    const from = b.let('tail_from', int32, mul(add(v.first, v.nLoad), DSA_PAGE_TOKENS));
    const to = b.let('tail_to', int32, minOf(mul(v.last, DSA_PAGE_TOKENS), a.max_context));
    const span = b.let('tail_span', int32, maxOf(sub(to, from), 0));
    b.forRange({ name: 'e', from: v.tid, to: mul(span, nextN), step: CONSUMERS * 128 }, (x, e) => {
      const r = x.let('r', int32, div(e, span));
      const pos = x.let('p', int32, add(from, sub(e, mul(r, span))));
      const rowIndex = add(mul(cast(v.seq, int64), nextN), cast(r, int64));
      x.assign(index(a.logits, add(mul(rowIndex, cast(a.logits_stride, int64)), cast(pos, int64))), infinity(float32, { negative: true }));
    });
  }
}

function checkDecodePolicy(p: DsaIndexerDecodePolicy): void {
  if (!DSA_INDEX_HEADS.includes(p.heads))
    throw new DsaArgumentError('policy.heads', `must be one of ${DSA_INDEX_HEADS.join(', ')}`, p.heads);
  if (!DSA_NEXT_N.includes(p.nextN)) throw new DsaArgumentError('policy.nextN', `must be one of ${DSA_NEXT_N.join(', ')}`, p.nextN);
  if (![2, 4, 8].includes(p.stages)) throw new DsaArgumentError('policy.stages', 'must be 2, 4 or 8', p.stages);
}
