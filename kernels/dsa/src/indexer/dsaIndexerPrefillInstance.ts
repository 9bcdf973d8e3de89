// The prefill indexer (DeepGEMM's fp8_mqa_logits on sm90, built from tilekit's layers): contiguous
// keys, a per-query key window [ks, ke) (causality, context parallelism), logits
// I[t][s] = scale[s] · Σ_h w[t][h] · ReLU(q8[t][h] · k8[s]) inside the window and −∞ outside.
import {
  add,
  and,
  bitAnd,
  cast,
  declareAlignedDynamicShared,
  div,
  eq,
  float32,
  ge,
  index,
  infinity,
  instanceKey,
  int32,
  int64,
  kernelParam,
  KernelInstance,
  lt,
  maxOf,
  mbarrierWaitParity,
  minOf,
  mul,
  pointer,
  select,
  sm90a,
  sub,
  uint32,
  type BlockBuilder,
  type Expr,
  type SourceBuilder,
  type Target,
} from '@tilekit/codegen';
import { DsaArgumentError } from '../dsaArgumentError.ts';
import { DSA_INDEX_HEAD_DIM, DSA_INDEX_HEADS, DSA_PAGE_SCALE_OFFSET, DSA_PAGE_TOKENS } from '../dsaShape.ts';
import { DsaIndexerTileStep } from './dsaIndexerTileStep.ts';
import { emitDsaKeyRingProducer } from './emitDsaKeyRingProducer.ts';
import { emitDsaRingBarriers, type DsaRingBarriers } from './emitDsaRingBarriers.ts';
import { dsaIndexerCommonParams, dsaIndexerSmem, type DsaIndexerSmem } from './dsaIndexerSmem.ts';

/** The Policy of one prefill-indexer instance. */
export interface DsaIndexerPrefillPolicy {
  /** Index query heads: 32 or 64. */
  readonly heads: number;
  /** Depth of the key ring: 2, 4 or 8. */
  readonly stages: number;
}

/** Consumer warpgroups: each owns 128 (query, head) rows of the CTA's query block and reads every key tile. */
const CONSUMERS = 2;
const PRODUCER_THREADS = 32;
/** (query, head) rows per consumer warpgroup (the wgmma N). */
const ROWS_PER_WARPGROUP = 128;
/** Bytes of one key tile: 64 tokens × 128 e4m3. */
const KEY_TILE_BYTES = DSA_PAGE_SCALE_OFFSET;

function prefillParams() {
  const count = { range: [1, 2 ** 31 - 1] as const };
  return {
    ...dsaIndexerCommonParams(),
    window_start: kernelParam.pointer(int32, { const: true, align: 4 }),
    window_end: kernelParam.pointer(int32, { const: true, align: 4 }),
    seq_q: kernelParam.i32(count),
    seq_kv: kernelParam.i32(count),
    logits_stride: kernelParam.i32(count),
  };
}

type PrefillParams = ReturnType<typeof prefillParams>;
type PrefillArgs = { readonly [K in keyof PrefillParams]: Expr };

/** What the CTA's roles share: its query block, key-tile range and barriers. */
interface PrefillCta {
  readonly tid: Expr;
  readonly q0: Expr;
  readonly jStart: Expr;
  readonly nTiles: Expr;
  readonly bars: DsaRingBarriers;
  readonly smem: Expr;
  readonly smemAddr: Expr;
}

/**
 * One prefill-indexer instance (sm_90a). CTA x takes the query block qb = gridDim.x − 1 − x (the
 * longest causal windows first) of 256 / H queries = 256 (query, head) rows, loaded once by TMA
 * (128B swizzle); its key range is the union of its queries' clamped windows, in 64-token tiles.
 * Threads: 2 consumer warpgroups (warpgroup w owns rows [128w, 128w + 128): 128 / H queries), then
 * a producer warp streaming each key tile (8 KiB, 128B swizzle) and its 64 scales into a ring of
 * `stages`; both warpgroups read every tile ({@link DsaIndexerTileStep}: wgmma m64n128k32 fp8 × 4,
 * ReLU·w head sum, × scale) and store the (token, query) logits, −∞ outside the query's window.
 * Positions outside the CTA's tile range get −∞ without a load.
 */
export class DsaIndexerPrefillInstance extends KernelInstance<DsaIndexerPrefillPolicy, PrefillParams> {
  protected readonly sourceHeader = { title: 'DSA lightning indexer, prefill', generator: '@tilekit/kernel-dsa' };
  readonly step: DsaIndexerTileStep;
  readonly smem: DsaIndexerSmem;
  /** Queries per CTA (256 / H). */
  readonly queriesPerCta: number;

  constructor(policy: DsaIndexerPrefillPolicy, target: Target = sm90a) {
    if (!DSA_INDEX_HEADS.includes(policy.heads))
      throw new DsaArgumentError('policy.heads', `must be one of ${DSA_INDEX_HEADS.join(', ')}`, policy.heads);
    if (![2, 4, 8].includes(policy.stages)) throw new DsaArgumentError('policy.stages', 'must be 2, 4 or 8', policy.stages);
    const key = instanceKey(
      'dsa_indexer_prefill',
      { heads: policy.heads, stages: policy.stages, target: target.name },
      { tags: { heads: 'h', stages: 's' } },
    );
    const smem = dsaIndexerSmem(CONSUMERS * ROWS_PER_WARPGROUP, policy.stages);
    const threads = CONSUMERS * 128 + PRODUCER_THREADS;
    super({ key, policy: Object.freeze({ ...policy }), target, params: prefillParams(), threads, sharedBytes: smem.used + 1024 });
    this.step = new DsaIndexerTileStep(ROWS_PER_WARPGROUP / policy.heads, policy.heads);
    this.smem = smem;
    this.queriesPerCta = (CONSUMERS * ROWS_PER_WARPGROUP) / policy.heads;
  }

  /** The grid for `seqQ` queries: one CTA per block of 256 / H queries. */
  launch(seqQ: number): { readonly grid: readonly [number, number, number]; readonly block: readonly [number, number, number] } {
    return { grid: [Math.max(1, Math.ceil(seqQ / this.queriesPerCta)), 1, 1], block: [this.threads, 1, 1] };
  }

  /** Emits the kernel's entry into `src`. */
  emit(src: SourceBuilder): void {
    const t = this.target;
    const { stages: S, heads: H } = this.policy;
    const Q = this.queriesPerCta;
    this.signature.defineEntry(src, { launchBounds: { maxThreads: this.threads } }, (b, a) => {
      const tid = b.let('tid', int32, cast(t.threadIdx('x'), int32), { range: [0, this.threads - 1] });
      const qb = b.let('q_block', int32, sub(sub(cast(t.gridDim('x'), int32), 1), cast(t.blockIdx('x'), int32)));
      const q0 = b.let('q0', int32, mul(qb, Q));
      b.comment(`the key range: the union of the block's ${Q} query windows, each clamped to [0, seq_kv)`);
      const lo = b.var('k_lo', int32, a.seq_kv);
      const hi = b.var('k_hi', int32, 0);
      for (let j = 0; j < Q; j++) {
        const { ks, ke } = windowOf(b, a, add(q0, j), `${j}`);
        b.if(and(lt(add(q0, j), a.seq_q), lt(ks, ke)), (x) => {
          x.assign(lo, minOf(lo, ks));
          x.assign(hi, maxOf(hi, ke));
        });
      }
      const jStart = b.let('j_start', int32, select(lt(lo, hi), div(lo, DSA_PAGE_TOKENS), 0));
      const nTiles = b.let('n_tiles', int32, select(lt(lo, hi), sub(div(add(hi, DSA_PAGE_TOKENS - 1), DSA_PAGE_TOKENS), jStart), 0));

      b.comment(
        `shared memory (1024-aligned): Q ${CONSUMERS * ROWS_PER_WARPGROUP}x128 e4m3 | ${S} key tiles | ${S} scale tiles | weights | barriers`,
      );
      const { smem, smemAddr } = declareAlignedDynamicShared(b, t, 'dsa_smem');
      const bars = emitDsaRingBarriers(b, t, { tid, base: add(smem, this.smem.barriers), stages: S, emptyWarps: CONSUMERS * 4 });
      const weights = b.let('w_smem', pointer(float32), cast(add(smem, this.smem.weights), pointer(float32)));
      b.comment("the block's weights: w[q0·H + c] at column c (0 past seq_q)");
      b.forRange({ name: 'c', from: tid, to: Q * H, step: this.threads }, (x, c) => {
        const inside = lt(add(q0, div(c, H)), a.seq_q);
        x.assign(index(weights, c), 0);
        x.if(inside, (y) => y.assign(index(weights, c), index(a.weights, add(mul(cast(q0, int64), H), cast(c, int64)))));
      });
      b.push(t.syncThreads());
      const cta: PrefillCta = { tid, q0, jStart, nTiles, bars, smem, smemAddr };
      b.if(
        ge(tid, CONSUMERS * 128),
        (prod) => prod.if(eq(tid, CONSUMERS * 128), (one) => this.emitProducer(one, a, cta)),
        (cons) => this.emitConsumers(cons, a, cta, weights),
      );
    });
  }

  private emitProducer(b: BlockBuilder, a: PrefillArgs, c: PrefillCta): void {
    emitDsaKeyRingProducer(b, this.target, {
      comment: 'producer: the query block once, then every key tile of the range into the ring',
      maps: { q: a.q_map, kv: a.kv_map, scale: a.scale_map },
      smem: c.smem,
      layout: this.smem,
      bars: c.bars,
      stages: this.policy.stages,
      qRows: CONSUMERS * ROWS_PER_WARPGROUP,
      qRow: mul(c.q0, this.policy.heads),
      count: c.nTiles,
      coords: (l, i) => {
        const k0 = l.let('k0', int32, mul(add(c.jStart, i), DSA_PAGE_TOKENS));
        return { kv: [0, k0], scale: [k0] };
      },
    });
  }

  private emitConsumers(b: BlockBuilder, a: PrefillArgs, c: PrefillCta, weights: Expr): void {
    const t = this.target;
    const S = this.policy.stages;
    const qPerWg = this.step.queries;
    const wg = b.let('warpgroup', int32, div(c.tid, 128));
    const ltid = b.let('wg_tid', int32, bitAnd(c.tid, 127));
    const qw = b.let('q_wg', int32, add(c.q0, mul(wg, qPerWg)));
    const windows = Array.from({ length: qPerWg }, (_, r) => windowOf(b, a, add(qw, r), `w${r}`));
    const { block, acc } = this.step.makeAccumulator(b, t, ltid);
    const scales = b.let('scale_smem', pointer(float32), cast(add(c.smem, this.smem.scales), pointer(float32)));
    b.expr(mbarrierWaitParity(t, c.bars.once, 0));
    const qTile = b.let(
      'q_tile',
      uint32,
      add(c.smemAddr, cast(add(this.smem.q, mul(wg, ROWS_PER_WARPGROUP * DSA_INDEX_HEAD_DIM)), uint32)),
    );
    b.forRange({ name: 'i', to: c.nTiles }, (l, i) => {
      const s = l.let('s', int32, bitAnd(i, S - 1));
      l.expr(mbarrierWaitParity(t, c.bars.full(s), cast(bitAnd(div(i, S), 1), uint32)));
      const k0 = l.let('k0', int32, mul(add(c.jStart, i), DSA_PAGE_TOKENS));
      this.step.emit(l, t, {
        block,
        acc,
        tid: ltid,
        kTile: l.let('kv_tile', uint32, add(c.smemAddr, cast(add(this.smem.kv, mul(s, KEY_TILE_BYTES)), uint32))),
        qTile,
        weight: (col) => index(weights, add(mul(wg, ROWS_PER_WARPGROUP), col)),
        scale: (row) => index(scales, add(mul(s, DSA_PAGE_TOKENS), row)),
        release: c.bars.empty(s),
        store: {
          valid: (row, r) => and(ge(add(k0, row), windows[r]!.ks), lt(add(k0, row), windows[r]!.ke)),
          target: (row, r) => {
            const pos = add(k0, row);
            const query = add(qw, r);
            return {
              at: index(a.logits, add(mul(cast(query, int64), cast(a.logits_stride, int64)), cast(pos, int64))),
              write: and(lt(pos, a.seq_kv), lt(query, a.seq_q)),
            };
          },
        },
      });
    });
    this.emitMaskedOutside(b, a, c);
  }

  /** −∞ for every position of the block's queries outside the loaded tiles: [0, 64·j_start) and [64·(j_start + n_tiles), seq_kv). */
  private emitMaskedOutside(b: BlockBuilder, a: PrefillArgs, c: PrefillCta): void {
    const Q = this.queriesPerCta;
    const negInf = infinity(float32, { negative: true });
    const before = b.let('before', int32, mul(c.jStart, DSA_PAGE_TOKENS));
    const after = b.let('after', int32, minOf(mul(add(c.jStart, c.nTiles), DSA_PAGE_TOKENS), a.seq_kv));
    const width = b.let('outside', int32, add(before, sub(a.seq_kv, after)));
    b.forRange({ name: 'e', from: c.tid, to: mul(width, Q), step: CONSUMERS * 128 }, (x, e) => {
      const r = x.let('r', int32, div(e, width));
      const k = x.let('k', int32, sub(e, mul(r, width)));
      const pos = x.let('pos', int32, select(lt(k, before), k, add(after, sub(k, before))));
      const query = add(c.q0, r);
      x.if(lt(query, a.seq_q), (y) =>
        y.assign(index(a.logits, add(mul(cast(query, int64), cast(a.logits_stride, int64)), cast(pos, int64))), negInf),
      );
    });
  }
}

/** Query q's window clamped to [0, seq_kv): ks = clamp(start), ke = clamp(end) (empty when ke ≤ ks); q is clamped to a valid row for the read. */
function windowOf(b: BlockBuilder, a: PrefillArgs, q: Expr, tag: string): { readonly ks: Expr; readonly ke: Expr } {
  const row = b.let(`win_row${tag}`, int32, minOf(q, sub(a.seq_q, 1)));
  const ks = b.let(`ks${tag}`, int32, minOf(maxOf(index(a.window_start, row), 0), a.seq_kv));
  const ke = b.let(`ke${tag}`, int32, minOf(maxOf(index(a.window_end, row), 0), a.seq_kv));
  return { ks, ke };
}
