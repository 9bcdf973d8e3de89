// The split-KV combine kernel (CK's fmha_fwd_splitkv_combine): merges the per-split partial O and
// LSE that split-KV attention instances write to their fp32 workspace into O (fp16/bf16, any
// strides) and, optionally, the final LSE. One block merges a tile of query rows of one (batch,
// head): the block first turns the splits' LSEs of its rows into weights exp(lse_s − lse) in shared
// memory, then sums the weighted partial O tiles, loaded through a tile window whose distribution
// puts consecutive lanes on consecutive 16-byte vectors of a row.
import {
  add,
  and,
  bool,
  cast,
  exp2Approx,
  log2Approx,
  div,
  float32,
  index,
  infinity,
  instanceKey,
  int32,
  int64,
  kernelParam,
  KernelInstance,
  lit,
  lt,
  maxOf,
  mod,
  mul,
  ne,
  select,
  type SourceBuilder,
  sm90a,
  sub,
  type Expr,
  type Target,
} from '@tilekit/codegen';
import { emitRowTileSequence, FMHA_FWD_DTYPES, FMHA_FWD_HEAD_DIMS, FMHA_FWD_MAX_SPLITS, type FmhaFwdDType } from '@tilekit/fmha';
import { makeNaiveTensorDescriptor, symbol } from '@tilekit/layout';
import { ArgumentError, getDType, TilekitError } from '@tilekit/numeric';
import {
  BlockEmitter,
  castTile,
  clearTile,
  hRef,
  loadTile,
  makeDistributedTensor,
  makeTensorView,
  makeTileWindow,
  storeTile,
  sweepTile,
  TileDistributionEncoding,
} from '@tilekit/tile';

/** The Policy of one combine instance: output dtype, value head dim, rows per block and threads. */
export interface FmhaFwdCombinePolicy {
  readonly dtype: FmhaFwdDType;
  readonly headDimV: number;
  /** Query rows merged per block. */
  readonly tileM: number;
  /** Threads per block (whole warps). */
  readonly threads: number;
}

/** Elements of one fp32 vector access of the partial O (16 bytes). */
const ACC_VECTOR = 4;
const WARP = 32;

/** Largest sequence length a parameter may carry (as the attention kernels). */
const MAX_ROWS = 2 ** 30;

/**
 * The distribution of a tileM × headDimV fp32 tile over `threads` threads: each row is cut into
 * 16-byte vectors (K1 = 4 floats) spread over K0 lanes (the largest power of two ≤ 32 dividing
 * headDimV / 4), repeated Krep times along the row; the 32 / K0 rows of one warp pass are stacked
 * over the warps, and the passes repeat M0 times. H_M = (M0, warps, M2), H_D = (Krep, K0, K1);
 * P0 (warp) → warps; P1 (lane) → (M2, K0); Y → (M0, Krep, K1). Throws `ArgumentError` for a shape it
 * cannot cover exactly.
 */
export function fmhaFwdCombineEncoding(policy: FmhaFwdCombinePolicy): TileDistributionEncoding {
  const { headDimV, tileM, threads } = policy;
  if (!Number.isSafeInteger(headDimV) || headDimV < ACC_VECTOR || headDimV % ACC_VECTOR !== 0)
    throw new ArgumentError('policy.headDimV', `must be a positive multiple of ${ACC_VECTOR}`, headDimV);
  if (!Number.isSafeInteger(threads) || threads < WARP || threads % WARP !== 0 || threads > 1024)
    throw new ArgumentError('policy.threads', 'must be a multiple of 32 in [32, 1024]', threads);
  const vectors = headDimV / ACC_VECTOR;
  let k0 = 1;
  while (k0 * 2 <= WARP && vectors % (k0 * 2) === 0) k0 *= 2;
  const krep = vectors / k0;
  const m2 = WARP / k0;
  const warps = threads / WARP;
  if (!Number.isSafeInteger(tileM) || tileM < 1 || tileM % (m2 * warps) !== 0)
    throw new ArgumentError(
      'policy.tileM',
      `must be a multiple of ${m2 * warps} (rows per pass of ${warps} warps with ${k0} lanes per row)`,
      tileM,
    );
  const m0 = tileM / (m2 * warps);
  return new TileDistributionEncoding({
    hs: [
      [m0, warps, m2],
      [krep, k0, ACC_VECTOR],
    ],
    ps: [[hRef(0, 1)], [hRef(0, 2), hRef(1, 1)]],
    ys: [hRef(0, 0), hRef(1, 0), hRef(1, 2)],
  });
}

function combineParams(policy: FmhaFwdCombinePolicy, target: Target) {
  const element = target.dtypeType(policy.dtype);
  const e = getDType(policy.dtype).bytes;
  const big = { range: [0, 2 ** 50] as const };
  return {
    o_acc: kernelParam.pointer(float32, { const: true, align: 16 }),
    lse_acc: kernelParam.pointer(float32, { const: true, align: 4 }),
    o: kernelParam.pointer(element, { align: 2 * e }),
    lse: kernelParam.pointer(float32, { align: 4, nullable: true }),
    o_stride_row: kernelParam.i32({ range: [2, 2 ** 31 - 2] }),
    o_stride_head: kernelParam.i64(big),
    o_stride_batch: kernelParam.i64(big),
    lse_stride_head: kernelParam.i64(big),
    lse_stride_batch: kernelParam.i64(big),
    o_acc_stride_head: kernelParam.i64(big),
    o_acc_stride_batch: kernelParam.i64(big),
    o_acc_split_stride: kernelParam.i64(big),
    lse_acc_stride_head: kernelParam.i64(big),
    lse_acc_stride_batch: kernelParam.i64(big),
    lse_acc_split_stride: kernelParam.i64(big),
    seqlen_q: kernelParam.i32({ range: [0, MAX_ROWS] }),
    seqstart_q: kernelParam.pointer(int32, { const: true, align: 4, nullable: true }),
    num_splits: kernelParam.i32({ range: [1, FMHA_FWD_MAX_SPLITS] }),
  };
}

type CombineParams = ReturnType<typeof combineParams>;

/** The launch of a combine instance: grid (row tiles, heads, batch), threads, no dynamic shared memory. */
export interface FmhaFwdCombineLaunch {
  readonly grid: readonly [number, number, number];
  readonly block: readonly [number, number, number];
  readonly sharedBytes: number;
}

/**
 * One split-KV combine kernel: for each (batch, head, row) of its tile, lse = log Σ_s exp(lse_s)
 * (max-subtracted; all splits −∞ → lse = −∞ and O = 0), O = Σ_s exp(lse_s − lse)·O_s, rounded to
 * the output dtype and written with O's strides, and lse written when the `lse` pointer is not null.
 * Any split count in [1, 128] at run time. Batch mode reads `seqlen_q` rows per sequence; group
 * mode (a non-null `seqstart_q`) the rows [seqstart_q[b], seqstart_q[b + 1]) of one "batch".
 */
export class FmhaFwdCombineInstance extends KernelInstance<FmhaFwdCombinePolicy, CombineParams> {
  readonly encoding: TileDistributionEncoding;
  protected readonly sourceHeader = { title: 'fmha forward split-KV combine', generator: '@tilekit/kernel-fmha-fwd' };

  /** Dynamic shared memory: none; static: the weights table, FMHA_FWD_MAX_SPLITS × tileM floats. */
  constructor(policy: FmhaFwdCombinePolicy, target: Target = sm90a) {
    const frozen = Object.freeze({ ...policy });
    const { dtype, headDimV, tileM, threads } = frozen;
    const key = instanceKey(
      'fmha_fwd_combine_sm90',
      { dtype, hdimv: headDimV, rows: tileM, threads, target: target.name },
      { tags: { dtype: '', hdimv: 'dv', rows: 'm', threads: 't' } },
    );
    const staticSharedBytes = FMHA_FWD_MAX_SPLITS * tileM * 4;
    super({ key, policy: frozen, target, params: combineParams(frozen, target), threads, staticSharedBytes });
    this.encoding = fmhaFwdCombineEncoding(frozen);
  }

  /**
   * Blocks per SM promised to ptxas: as many as fit (≤ 8) while each thread keeps 2 registers per
   * accumulator element plus 32 (the sum, a loaded split and addressing). Enough warps in flight for
   * a load-bound kernel; without a minimum ptxas aims at a lower budget and spills.
   */
  get minBlocksPerSm(): number {
    const need = 2 * this.encoding.threadBufferSize + 32;
    let blocks = 8;
    while (blocks > 1 && 65536 / (this.threads * blocks) < need) blocks /= 2;
    return blocks;
  }

  /** Grid for `batch` sequences (group mode: 1 per sequence) of at most `maxSeqlenQ` rows and `nheadQ` heads. */
  launch(batch: number, nheadQ: number, maxSeqlenQ: number): FmhaFwdCombineLaunch {
    return { grid: [Math.max(1, Math.ceil(maxSeqlenQ / this.policy.tileM)), nheadQ, batch], block: [this.threads, 1, 1], sharedBytes: 0 };
  }

  /** Adds the kernel to a translation unit. */
  emit(src: SourceBuilder): void {
    const P = this.policy;
    const t = this.target;
    const rows = symbol('seqlen_q', { max: MAX_ROWS });
    const oStride = symbol('o_stride_row', { max: 2 ** 31 - 1 });
    // The partial O of one (split, batch, head): rows of headDimV floats, 16-byte aligned.
    const accDesc = makeNaiveTensorDescriptor([rows, P.headDimV], [P.headDimV, 1], { vectorLength: ACC_VECTOR });
    // O: its row stride is even (the launcher checks), so element pairs are aligned.
    const oDesc = makeNaiveTensorDescriptor([rows, P.headDimV], [oStride, 1], { vectorLength: 2 });
    // ex2/lg2.approx (as the attention kernels' softmax): CUDA's accurate expf needs a stack frame.
    const expf = (x: Expr): Expr => exp2Approx(t, mul(x, lit(Math.LOG2E, float32)));
    const logf = (x: Expr): Expr => mul(log2Approx(t, x), lit(Math.LN2, float32));
    const negInf = infinity(float32, { negative: true });
    this.signature.defineEntry(src, { launchBounds: { maxThreads: this.threads, minBlocksPerSm: this.minBlocksPerSm } }, (b, a) => {
      const {
        batch,
        head,
        m0,
        rowStart: rowQ,
        seqlen: seqlenQ,
      } = emitRowTileSequence(b, t, { tileRows: P.tileM, seqlen: a.seqlen_q, seqstart: a.seqstart_q });
      const row64 = cast(rowQ, int64);
      const oAcc = b.let(
        'o_acc_base',
        a.o_acc.type,
        add(
          a.o_acc,
          add(add(mul(cast(batch, int64), a.o_acc_stride_batch), mul(cast(head, int64), a.o_acc_stride_head)), mul(row64, P.headDimV)),
        ),
      );
      const lseAcc = b.let(
        'lse_acc_base',
        a.lse_acc.type,
        add(a.lse_acc, add(add(mul(cast(batch, int64), a.lse_acc_stride_batch), mul(cast(head, int64), a.lse_acc_stride_head)), row64)),
      );
      const oBase = b.let(
        'o_base',
        a.o.type,
        add(
          a.o,
          add(
            add(mul(cast(batch, int64), a.o_stride_batch), mul(cast(head, int64), a.o_stride_head)),
            mul(row64, cast(a.o_stride_row, int64)),
          ),
        ),
      );
      const block = new BlockEmitter(b, t, {
        numThreads: this.threads,
        index: { symbols: { seqlen_q: seqlenQ, o_stride_row: a.o_stride_row } },
      });
      // weights[s · tileM + r]: first the splits' LSEs of row m0 + r, then exp(lse_s − lse).
      const weights = block.shared('weights', float32, FMHA_FWD_MAX_SPLITS * P.tileM);
      const entries = mul(a.num_splits, P.tileM);

      b.comment("1. the splits' LSEs of this tile's rows into shared memory (rows past the sequence: −∞)");
      block.threads((th) => {
        th.b.forRange({ name: 'i', from: th.tid, to: entries, step: this.threads }, (l, i) => {
          const s = l.let('s', int32, div(i, P.tileM));
          const row = l.let('row', int32, add(m0, mod(i, P.tileM)));
          l.assign(
            index(weights, i),
            select(lt(row, seqlenQ), index(lseAcc, add(mul(cast(s, int64), a.lse_acc_split_stride), cast(row, int64))), negInf),
          );
        });
      });
      block.sync();

      b.comment('2. per row: lse = m + log Σ_s exp(lse_s − m) (−∞ when every split is empty); the weights exp(lse_s − lse)');
      block.threads((th) => {
        th.b.if(lt(th.tid, P.tileM), (r) => {
          const at = (s: Expr): Expr => index(weights, add(mul(s, P.tileM), th.tid));
          const m = r.var('lse_max', float32, negInf);
          r.forRange({ name: 's', to: a.num_splits }, (l, s) => l.assign(m, maxOf(m, at(s))));
          const live = r.let('live', bool, ne(m, negInf));
          const sum = r.var('sum', float32, lit(0, float32));
          r.if(live, (x) => x.forRange({ name: 's', to: a.num_splits }, (l, s) => l.assign(sum, add(sum, expf(sub(at(s), m))))));
          const lse = r.let('lse', float32, select(live, add(m, logf(sum)), negInf));
          r.forRange({ name: 's', to: a.num_splits }, (l, s) => l.assign(at(s), select(live, expf(sub(at(s), lse)), lit(0, float32))));
          const row = r.let('row', int32, add(m0, th.tid));
          r.if(and(ne(select(a.lse, 1, 0), 0), lt(row, seqlenQ)), (st) =>
            st.assign(
              index(
                a.lse,
                add(
                  add(mul(cast(batch, int64), a.lse_stride_batch), mul(cast(head, int64), a.lse_stride_head)),
                  add(row64, cast(row, int64)),
                ),
              ),
              lse,
            ),
          );
        });
      });
      block.sync();

      b.comment('3. O = Σ_s weight_s · O_s over the tile, 16-byte loads along the head dim; then rounded and stored');
      const acc = makeDistributedTensor(block, 'o_sum', this.encoding, float32);
      const part = makeDistributedTensor(block, 'o_part', this.encoding, float32);
      const out = makeDistributedTensor(block, 'o_out', this.encoding, t.dtypeType(P.dtype));
      block.threads((th) => clearTile(th, acc));
      const split = b.declare('o_split', a.o_acc.type, oAcc, { storage: 'mutable' });
      const accWindow = makeTileWindow(block, {
        view: makeTensorView(split, accDesc),
        lengths: [P.tileM, P.headDimV],
        origin: [m0, 0],
        encoding: this.encoding,
        originAlignment: [P.tileM, P.headDimV],
      });
      // Two splits per trip: their loads are in flight together (ptxas's own unrolling spills here).
      block.forRange({ name: 's', to: a.num_splits, unroll: 2 }, (inner, s) => {
        inner.threads((th) => {
          loadTile(th, accWindow, part);
          sweepTile(th, part, (e) => {
            const w = e.b.let('w', float32, index(weights, add(mul(s, P.tileM), e.x[0]!)));
            e.b.assign(acc.at(th, e.d), add(acc.at(th, e.d), mul(w, e.value)));
          });
        });
        inner.b.assign(split, add(split, a.o_acc_split_stride));
      });
      const oWindow = makeTileWindow(block, {
        view: makeTensorView(oBase, oDesc, { elementBytes: getDType(P.dtype).bytes }),
        lengths: [P.tileM, P.headDimV],
        origin: [m0, 0],
        encoding: this.encoding,
        originAlignment: [P.tileM, P.headDimV],
      });
      block.threads((th) => {
        castTile(th, out, acc);
        storeTile(th, oWindow, out);
      });
    });
  }
}

/** Two combine instances with one name or hash. */
export class FmhaFwdCombineCatalogError extends TilekitError {
  constructor(message: string) {
    super('fmha-fwd/combine-catalog', message);
  }
}

/** Rows per block and threads of every combine instance (16 rows, 4 warps). */
export const FMHA_FWD_COMBINE_TILE = Object.freeze({ tileM: 16, threads: 128 });

function buildCombineCatalog(): FmhaFwdCombineInstance[] {
  const dims = [...new Set(FMHA_FWD_HEAD_DIMS.map((d) => d.hdimV))];
  const out = FMHA_FWD_DTYPES.flatMap((dtype) =>
    dims.map((headDimV) => new FmhaFwdCombineInstance({ dtype, headDimV, ...FMHA_FWD_COMBINE_TILE })),
  );
  const names = new Set<string>();
  const hashes = new Set<string>();
  for (const i of out) {
    if (names.has(i.name) || hashes.has(i.key.hash))
      throw new FmhaFwdCombineCatalogError(`two combine instances share the name or hash of ${i.name}`);
    names.add(i.name);
    hashes.add(i.key.hash);
  }
  return out;
}

/**
 * Every combine instance (sm_90a): {fp16, bf16} × the value head dims of `FMHA_FWD_HEAD_DIMS`
 * (32, 64, 96, 128, 256). Postcondition (tested): names and hashes unique, one per (dtype, hdimV).
 */
export const FMHA_FWD_COMBINE_CATALOG: readonly FmhaFwdCombineInstance[] = Object.freeze(buildCombineCatalog());

/** The combine instance for `dtype` and `hdimV`, or undefined. */
export function findFmhaFwdCombineInstance(
  dtype: FmhaFwdDType,
  hdimV: number,
  catalog: readonly FmhaFwdCombineInstance[] = FMHA_FWD_COMBINE_CATALOG,
): FmhaFwdCombineInstance | undefined {
  return catalog.find((i) => i.policy.dtype === dtype && i.policy.headDimV === hdimV);
}

/** One split's partial result for a row: its LSE (natural log; −∞ when it saw no key) and its O (normalized over its keys). */
export interface SplitPartial {
  readonly lse: number;
  readonly o: ArrayLike<number>;
}

/**
 * The combine on the host (float64), the kernel's formula: lse = m + ln Σ_s e^{lse_s − m} with m =
 * max_s lse_s (−∞ when every split is −∞, and then O = 0), O = Σ_s e^{lse_s − lse}·O_s.
 * Postcondition (property-tested): combining the softmax of disjoint key subsets gives the softmax
 * over their union.
 */
export function combineSplitPartials(parts: readonly SplitPartial[], hdimV: number): { readonly lse: number; readonly o: Float64Array } {
  const o = new Float64Array(hdimV);
  const m = Math.max(-Infinity, ...parts.map((p) => p.lse));
  if (m === -Infinity) return { lse: -Infinity, o };
  const lse = m + Math.log(parts.reduce((sum, p) => sum + Math.exp(p.lse - m), 0));
  for (const p of parts) {
    const w = Math.exp(p.lse - lse);
    if (w === 0) continue;
    for (let j = 0; j < hdimV; j++) o[j] = o[j]! + w * p.o[j]!;
  }
  return { lse, o };
}
