// The selection kernel of Sparge's block map (stage 1, part B): per (b, h, query block row) the
// pooled scores against every key block, a bitonic sort of the candidates by (score descending,
// block ascending) in shared memory, the topk / cdf count, upstream's finalisation (fix K columns,
// fix Q rows, causal, sink), and the map, the delta LUT and the valid counts. One CTA takes
// `rowsPerCta` consecutive query blocks of one (b, h): their pooled K reads are shared, and their
// sorts run as independent segments of one network (one barrier per stage for all of them).
import {
  add,
  and,
  bitAnd,
  bitNot,
  bitOr,
  call,
  cast,
  div,
  eq,
  f32,
  float32,
  float64,
  gt,
  index,
  instanceKey,
  int32,
  int64,
  kernelParam,
  KernelInstance,
  le,
  lt,
  minOf,
  mul,
  ne,
  not,
  or,
  pointer,
  select,
  shl,
  shr,
  sm90a,
  type SourceBuilder,
  sub,
  u64,
  uint32,
  uint64,
  uint8,
  bool,
  declareAlignedDynamicShared,
  assignStmt,
  type BlockBuilder,
  type Expr,
  type Target,
  type VarExpr,
} from '@tilekit/codegen';
import { emitBlockExclusiveScan, type BlockScan } from '@tilekit/tile';
import { SpargeArgumentError } from '../spargeArgumentError.ts';
import { SPARGE_HEAD_DIMS } from '../spargeShape.ts';
import { SPARGE_SELECT_MAX_KEY_BLOCKS, spargeSelectSortLength } from './spargeSelectSortNetwork.ts';

/** Query-block rows one CTA may take (compile-time: the pooled Q rows live in registers). */
export const SPARGE_SELECT_ROWS_PER_CTA = [1, 2, 4, 8] as const;

/** Threads of every selection CTA (8 warps). */
export const SPARGE_SELECT_THREADS = 256;

/** Alignment slack the dynamic shared memory is requested with (its start is rounded up at run time). */
const SMEM_ALIGN = 16;

/** The Policy of one selection instance. */
export interface SpargeSelectPolicy {
  /** 64 or 128. */
  readonly headDim: number;
  /** One of {@link SPARGE_SELECT_ROWS_PER_CTA}. */
  readonly rowsPerCta: number;
}

/** The launch of the selection kernel: grid (⌈qBlocksMax/rowsPerCta⌉, nhead, batch), dynamic shared memory. */
export interface SpargeSelectLaunch {
  readonly grid: readonly [number, number, number];
  readonly block: readonly [number, number, number];
  readonly sharedBytes: number;
}

function selectParams() {
  const count = { range: [0, 2 ** 30] as const };
  return {
    pooled_q: kernelParam.pointer(float32, { const: true, align: 4 }),
    sim_q: kernelParam.pointer(float32, { const: true, align: 4 }),
    pooled_k: kernelParam.pointer(float32, { const: true, align: 4 }),
    sim_k: kernelParam.pointer(float32, { const: true, align: 4 }),
    simthreshd1: kernelParam.pointer(float64, { const: true, align: 8 }),
    selection_value: kernelParam.pointer(float64, { const: true, align: 8 }),
    block_map: kernelParam.pointer(uint8, { align: 1 }),
    lut: kernelParam.pointer(int32, { align: 4 }),
    valid_block_num: kernelParam.pointer(int32, { align: 4 }),
    visited: kernelParam.pointer(int32, { align: 4, nullable: true }),
    nhead: kernelParam.i32({ range: [1, 2 ** 16] }),
    nhead_ratio: kernelParam.i32({ range: [1, 2 ** 16] }),
    q_blocks_max: kernelParam.i32({ range: [1, 2 ** 24] }),
    k_blocks_max: kernelParam.i32({ range: [1, SPARGE_SELECT_MAX_KEY_BLOCKS] }),
    sort_capacity: kernelParam.i32({ range: [1, SPARGE_SELECT_MAX_KEY_BLOCKS] }),
    seqlen_q: kernelParam.i32(count),
    seqlen_k: kernelParam.i32(count),
    seqstart_q: kernelParam.pointer(int32, { const: true, align: 4, nullable: true }),
    seqstart_k: kernelParam.pointer(int32, { const: true, align: 4, nullable: true }),
    block_q: kernelParam.i32({ range: [1, 1024] }),
    block_k: kernelParam.i32({ range: [1, 1024] }),
    cdf_mode: kernelParam.i32({ range: [0, 1] }),
    is_causal: kernelParam.i32({ range: [0, 1] }),
    attention_sink: kernelParam.i32({ range: [0, 1] }),
  };
}

type SelectParams = ReturnType<typeof selectParams>;

/** Dynamic shared memory of a CTA whose rows sort over `sortCapacity` slots (a power of two). */
export function spargeSelectSharedBytes(rowsPerCta: number, sortCapacity: number): number {
  // scan scratch (32 ints + 32 floats + 8 row scalars) | keys u64 [rows][capacity] | absolute indices i32 [capacity] | flags u8 [capacity]
  return SMEM_ALIGN + 72 * 4 + rowsPerCta * sortCapacity * 8 + sortCapacity * 4 + sortCapacity;
}

/**
 * One selection instance (sm_90a; the code is plain CUDA and runs on sm_80 too). For each query
 * block row i < qBlocks_b of (b, h) it computes, in fp32, Ŝ[j] = q̄ᵢ·k̄ⱼ·(1/√d) for j < kBlocks_b,
 * excludes fix K blocks (!((double)simK > simthreshd1[h])) and, when `is_causal`, the key blocks
 * with j·blockK > min((i+1)·blockQ, sq_b) − 1; sorts the rest by `spargeSelectSortKey`; keeps
 * n = min(max(1, c), candidates) of them, c = ⌊topk[h]·kBlocks_b⌋ (double) or #{t: cdf_t ≤ τ[h]}
 * (softmax in sorted order, block scan in fp32, compared in double); and writes
 * M = (fixK ∨ fixQ ∨ selected) ∧ allowed, M[0] = 1 with the sink, as block_map (uint8), the delta
 * LUT (int32) and valid_block_num (int32) over the padded grid [b][h][q_blocks_max][k_blocks_max]
 * (0 past a sequence's blocks), and adds each row's count to visited[b·nhead + h] when non-null
 * (which must be zeroed first). Postcondition (GPU spec): equal to `spargeSelectReference` except
 * in rows whose CPU margins lie within fp32 rounding.
 * @throws SpargeArgumentError for a head dim outside {64, 128} or rowsPerCta outside the list.
 */
export class SpargeSelectInstance extends KernelInstance<SpargeSelectPolicy, SelectParams> {
  protected readonly sourceHeader = { title: 'sparge block-map selection', generator: '@tilekit/kernel-sparge' };

  /** Dynamic shared memory is sized per launch (`launch`): `sharedBytes` is 0. */
  constructor(policy: SpargeSelectPolicy, target: Target = sm90a) {
    if (!(SPARGE_HEAD_DIMS as readonly number[]).includes(policy.headDim))
      throw new SpargeArgumentError('policy.headDim', `must be one of ${SPARGE_HEAD_DIMS.join(', ')}`, policy.headDim);
    if (!(SPARGE_SELECT_ROWS_PER_CTA as readonly number[]).includes(policy.rowsPerCta)) {
      throw new SpargeArgumentError('policy.rowsPerCta', `must be one of ${SPARGE_SELECT_ROWS_PER_CTA.join(', ')}`, policy.rowsPerCta);
    }
    const threads = SPARGE_SELECT_THREADS;
    const key = instanceKey(
      'sparge_select',
      { hdim: policy.headDim, rows: policy.rowsPerCta, threads, target: target.name },
      { tags: { hdim: 'd', rows: 'r', threads: 't' } },
    );
    const frozen = Object.freeze({ headDim: policy.headDim, rowsPerCta: policy.rowsPerCta });
    super({ key, policy: frozen, target, params: selectParams(), threads });
  }

  /** The launch for `batch` sequences, `nhead` heads, a padded grid of qBlocksMax × kBlocksMax. */
  launch(batch: number, nhead: number, qBlocksMax: number, kBlocksMax: number): SpargeSelectLaunch {
    const capacity = spargeSelectSortLength(kBlocksMax);
    return {
      grid: [Math.ceil(qBlocksMax / this.policy.rowsPerCta), nhead, batch],
      block: [this.threads, 1, 1],
      sharedBytes: spargeSelectSharedBytes(this.policy.rowsPerCta, capacity),
    };
  }

  /** Emits the kernel's entry into `src`. */
  emit(src: SourceBuilder): void {
    const t = this.target;
    const R = this.policy.rowsPerCta;
    const d = this.policy.headDim;
    const T = this.threads;
    const warp = t.warpSize!;
    const W = T / warp;
    const V = d / warp;
    this.signature.defineEntry(src, { launchBounds: { maxThreads: T, minBlocksPerSm: 2 } }, (b, a) => {
      const tid = b.let('tid', int32, cast(t.threadIdx('x'), int32), { range: [0, T - 1] });
      const lane = b.let('lane', int32, bitAnd(tid, warp - 1));
      const warpId = b.let('warp_id', int32, shr(tid, Math.log2(warp)));
      const bIdx = b.let('batch_idx', int32, cast(t.blockIdx('z'), int32));
      const h = b.let('head', int32, cast(t.blockIdx('y'), int32));
      const i0 = b.let('row0', int32, mul(cast(t.blockIdx('x'), int32), R));
      const group = b.let('group', int32, select(a.seqstart_q, 1, 0));
      const span = (starts: Expr, len: Expr, name: string): VarExpr =>
        b.let(name, int32, select(ne(group, 0), sub(index(starts, add(bIdx, 1)), index(starts, bIdx)), len));
      const sq = span(a.seqstart_q, a.seqlen_q, 'seqlen_q_b');
      const sk = span(a.seqstart_k, a.seqlen_k, 'seqlen_k_b');
      const qBlocks = b.let('q_blocks', int32, div(add(sq, sub(a.block_q, 1)), a.block_q));
      const kBlocks = b.let('k_blocks', int32, div(add(sk, sub(a.block_k, 1)), a.block_k));
      const P = b.var('sort_len', int32, 1);
      b.while(lt(P, kBlocks), (x) => x.assign(P, shl(P, 1)));
      const bh = b.let('bh', int64, add(mul(cast(bIdx, int64), cast(a.nhead, int64)), cast(h, int64)));
      const bhk = b.let(
        'bhk',
        int64,
        add(mul(cast(bIdx, int64), cast(div(a.nhead, a.nhead_ratio), int64)), cast(div(h, a.nhead_ratio), int64)),
      );
      const theta = b.let('theta', float64, index(a.simthreshd1, h));
      const selValue = b.let('sel_value', float64, index(a.selection_value, h));
      const invSqrtD = f32(1 / Math.sqrt(d));

      b.comment('dynamic shared memory: scan scratch | sort keys [rows][capacity] | absolute indices | flags');
      const { smem } = declareAlignedDynamicShared(b, t, 'sparge_smem', SMEM_ALIGN);
      const scratchI = b.let('scratch_i', pointer(int32), cast(smem, pointer(int32)));
      const scratchF = b.let('scratch_f', pointer(float32), cast(add(smem, 32 * 4), pointer(float32)));
      // Block scans over one value per thread; the three-barrier variant frees its scratch on return and sums floats without a subtraction.
      const blockScan = (x: BlockBuilder, name: string, value: Expr, scratch: Expr): BlockScan =>
        emitBlockExclusiveScan(x, { target: t, threads: T, tid, scratch }, name, value, { variant: 'threeBarrier' });
      const rowScalar = b.let('row_scalar', pointer(int32), cast(add(smem, 64 * 4), pointer(int32)));
      const keys = b.let('keys', pointer(uint64), cast(add(smem, 72 * 4), pointer(uint64)));
      const absIdx = b.let('abs_idx', pointer(int32), cast(add(add(smem, 72 * 4), mul(a.sort_capacity, 8 * R)), pointer(int32)));
      const flags = b.let('flags', pointer(uint8), add(add(add(smem, 72 * 4), mul(a.sort_capacity, 8 * R)), mul(a.sort_capacity, 4)));
      const none = u64(0xffff_ffff_ffff_ffffn);

      b.comment('candidate counts per row start at 0 (each is set by the one thread that sees the boundary)');
      b.if(lt(tid, R), (x) => x.assign(index(rowScalar, tid), 0));

      b.comment('pooled Q rows in registers: lane holds elements lane + 32·v');
      const rowActive: VarExpr[] = [];
      const qReg: VarExpr[][] = [];
      for (let r = 0; r < R; r++) {
        const i = add(i0, r);
        rowActive.push(b.let(`active${r}`, bool, lt(i, qBlocks)));
        const rowOff = b.let(
          `q_off${r}`,
          int64,
          mul(add(mul(bh, cast(a.q_blocks_max, int64)), cast(minOf(i, sub(a.q_blocks_max, 1)), int64)), d),
        );
        qReg.push(
          Array.from({ length: V }, (_, v) =>
            b.let(`q${r}_${v}`, float32, select(rowActive[r]!, index(a.pooled_q, add(rowOff, add(lane, v * warp))), 0)),
          ),
        );
      }

      b.comment('scores: warp per key block; keys of non-candidates (fix K, causally masked, padding, inactive rows) sort last');
      b.forRange({ name: 'j', from: warpId, to: P, step: W }, (x, j) => {
        x.if(
          lt(j, kBlocks),
          (y) => {
            const kOff = y.let('k_off', int64, mul(add(mul(bhk, cast(a.k_blocks_max, int64)), cast(j, int64)), d));
            const kReg = Array.from({ length: V }, (_, v) => y.let(`k${v}`, float32, index(a.pooled_k, add(kOff, add(lane, v * warp)))));
            const fixK = y.let(
              'fix_k',
              bool,
              not(gt(cast(index(a.sim_k, add(mul(bhk, cast(a.k_blocks_max, int64)), cast(j, int64))), float64), theta)),
            );
            for (let r = 0; r < R; r++) {
              const dot = y.var(`dot${r}`, float32, 0);
              for (let v = 0; v < V; v++) y.assign(dot, call('fmaf', [qReg[r]![v]!, kReg[v]!, dot], float32, { pure: true }));
              for (let o = warp / 2; o >= 1; o /= 2) y.assign(dot, add(dot, t.shflXor(dot, o)));
              const i = add(i0, r);
              const allowed = or(eq(a.is_causal, 0), le(mul(j, a.block_k), sub(minOf(mul(add(i, 1), a.block_q), sq), 1)));
              y.if(eq(lane, r % warp), (z) => {
                const s0 = z.let('score', float32, mul(dot, invSqrtD));
                const s = z.let('score_pz', float32, select(eq(s0, 0), 0, s0));
                const bits = z.let('bits', uint32, call('__float_as_uint', [s], uint32, { pure: true }));
                const ordered = z.let('ordered', uint32, select(ne(bitAnd(bits, 0x8000_0000), 0), bitNot(bits), bitOr(bits, 0x8000_0000)));
                const key = z.let('key', uint64, bitOr(shl(cast(bitNot(ordered), uint64), 32), cast(j, uint64)));
                const candidate = and(and(rowActive[r]!, not(fixK)), allowed);
                z.assign(index(keys, add(mul(P, r), j)), select(candidate, key, none));
              });
            }
          },
          (y) => {
            y.if(lt(lane, R), (z) => z.assign(index(keys, add(mul(P, lane), j)), none));
          },
        );
      });
      b.push(t.syncThreads());

      b.comment('bitonic sort of every row segment (ascending keys = score descending, block ascending)');
      const half = b.let('half', int32, shr(P, 1));
      const pairs = b.let('pairs', int32, mul(half, R));
      b.for(
        { name: 'k_stage', type: int32, value: 2 },
        (kv) => le(kv!, P),
        (kv) => assignStmt(kv!, cast(1, int32), '<<='),
        (x, kv) => {
          x.for(
            { name: 'j_stage', type: int32, value: shr(kv!, 1) },
            (jv) => gt(jv!, 0),
            (jv) => assignStmt(jv!, cast(1, int32), '>>='),
            (y, jv) => {
              y.forRange({ name: 'p', from: tid, to: pairs, step: T }, (z, p) => {
                const seg = z.let('seg', int32, div(p, half));
                const q = z.let('q', int32, sub(p, mul(seg, half)));
                const lo = z.let('lo', int32, bitOr(shl(bitAnd(q, bitNot(sub(jv!, 1))), 1), bitAnd(q, sub(jv!, 1))));
                const at = z.let('at', int32, add(mul(seg, P), lo));
                const x0 = z.let('x0', uint64, index(keys, at));
                const x1 = z.let('x1', uint64, index(keys, add(at, jv!)));
                z.if(eq(gt(x0, x1), eq(bitAnd(lo, kv!), 0)), (w) => {
                  w.assign(index(keys, at), x1);
                  w.assign(index(keys, add(at, jv!)), x0);
                });
              });
              y.push(t.syncThreads());
            },
          );
        },
      );

      b.comment('candidates per row: the sorted position after which only non-candidates follow');
      b.forRange({ name: 'p', from: tid, to: mul(P, R), step: T }, (x, p) => {
        const seg = x.let('seg', int32, div(p, P));
        const pos = x.let('pos', int32, sub(p, mul(seg, P)));
        const here = ne(index(keys, p), none);
        const last = or(eq(add(pos, 1), P), eq(index(keys, add(p, 1)), none));
        x.if(and(here, last), (y) => y.assign(index(rowScalar, seg), add(pos, 1)));
      });
      b.push(t.syncThreads());

      for (let r = 0; r < R; r++) {
        const i = b.let(`i${r}`, int32, add(i0, r));
        b.if(lt(i, a.q_blocks_max), (x) => {
          const active = rowActive[r]!;
          const row = x.let('row', int64, add(mul(bh, cast(a.q_blocks_max, int64)), cast(i, int64)));
          const rowKeys = x.let('row_keys', pointer(uint64), add(keys, mul(P, r)));
          const m = x.let('candidates', int32, index(rowScalar, r));
          const count = x.var('count', int32, 0);
          x.if(
            ne(a.cdf_mode, 0),
            (y) => {
              y.comment('cdf: softmax over the candidates in sorted order; c_t = (Σ_{u≤t} e_u)/Σ e; count c_t ≤ τ');
              const top = y.let('top', float32, decodeScore(y, index(rowKeys, 0)));
              const chunk = y.let('chunk', int32, div(add(m, T - 1), T));
              const first = y.let('first', int32, minOf(mul(tid, chunk), m));
              const end = y.let('end', int32, minOf(add(first, chunk), m));
              const local = y.var('local', float32, 0);
              y.forRange({ name: 't', from: first, to: end }, (z, tt) =>
                z.assign(local, add(local, call('expf', [sub(decodeScore(z, index(rowKeys, tt)), top)], float32, { pure: true }))),
              );
              const scan = blockScan(y, 'mass', local, scratchF);
              const running = y.var('running', float32, scan.exclusive);
              const mine = y.var('mine', int32, 0);
              y.forRange({ name: 't', from: first, to: end }, (z, tt) => {
                z.assign(running, add(running, call('expf', [sub(decodeScore(z, index(rowKeys, tt)), top)], float32, { pure: true })));
                z.if(le(cast(div(running, scan.total), float64), selValue), (w) => w.assign(mine, add(mine, 1)));
              });
              const counted = blockScan(y, 'kept', mine, scratchI);
              y.assign(count, counted.total);
            },
            (y) => {
              y.comment('topk: ⌊topk·kBlocks_b⌋ in double, as spargeTopkCount');
              y.assign(count, cast(call('floor', [mul(selValue, cast(kBlocks, float64))], float64, { pure: true }), int32));
            },
          );
          const n = x.let('selected', int32, select(and(active, gt(m, 0)), minOf(select(lt(count, 1), 1, count), m), 0));
          x.comment('flags: selected blocks, then M = (fixK ∨ fixQ ∨ selected) ∧ allowed, sink');
          x.forRange({ name: 'j', from: tid, to: kBlocks, step: T }, (y, j) => y.assign(index(flags, j), 0));
          x.push(t.syncThreads());
          x.forRange({ name: 't', from: tid, to: n, step: T }, (y, tt) =>
            y.assign(index(flags, cast(bitAnd(index(rowKeys, tt), 0xffff_ffff), int32)), 1),
          );
          x.push(t.syncThreads());
          const fixQ = x.let('fix_q', bool, not(gt(cast(index(a.sim_q, row), float64), theta)));
          x.forRange({ name: 'j', from: tid, to: kBlocks, step: T }, (y, j) => {
            const fixK = not(gt(cast(index(a.sim_k, add(mul(bhk, cast(a.k_blocks_max, int64)), cast(j, int64))), float64), theta));
            const allowed = or(eq(a.is_causal, 0), le(mul(j, a.block_k), sub(minOf(mul(add(i, 1), a.block_q), sq), 1)));
            const on = y.let(
              'on',
              bool,
              and(active, or(and(allowed, or(or(ne(index(flags, j), 0), fixK), fixQ)), and(ne(a.attention_sink, 0), eq(j, 0)))),
            );
            y.assign(index(flags, j), select(on, 1, 0));
          });
          x.push(t.syncThreads());
          x.comment('LUT: positions by a block scan of the flags over per-thread chunks, absolute indices, then deltas');
          const chunk = x.let('kchunk', int32, div(add(kBlocks, T - 1), T));
          const first = x.let('kfirst', int32, minOf(mul(tid, chunk), kBlocks));
          const end = x.let('kend', int32, minOf(add(first, chunk), kBlocks));
          const ones = x.var('ones', int32, 0);
          x.forRange({ name: 'j', from: first, to: end }, (y, j) => y.assign(ones, add(ones, cast(index(flags, j), int32))));
          const scan = blockScan(x, 'pos', ones, scratchI);
          const pos = x.var('pos', int32, scan.exclusive);
          x.forRange({ name: 'j', from: first, to: end }, (y, j) =>
            y.if(ne(index(flags, j), 0), (z) => {
              z.assign(index(absIdx, pos), j);
              z.assign(pos, add(pos, 1));
            }),
          );
          x.push(t.syncThreads());
          const valid = scan.total;
          const out = x.let('out', int64, mul(row, cast(a.k_blocks_max, int64)));
          x.forRange({ name: 'j', from: tid, to: a.k_blocks_max, step: T }, (y, j) => {
            y.assign(
              index(a.block_map, add(out, cast(j, int64))),
              select(lt(j, kBlocks), index(flags, minOf(j, sub(a.sort_capacity, 1))), 0),
            );
            const delta = select(
              lt(j, valid),
              sub(index(absIdx, minOf(j, sub(a.sort_capacity, 1))), select(gt(j, 0), index(absIdx, select(gt(j, 0), sub(j, 1), 0)), 0)),
              0,
            );
            y.assign(index(a.lut, add(out, cast(j, int64))), delta);
          });
          x.if(eq(tid, 0), (y) => {
            y.assign(index(a.valid_block_num, row), valid);
            y.if(and(ne(select(a.visited, 1, 0), 0), gt(valid, 0)), (z) => z.expr(call('atomicAdd', [add(a.visited, bh), valid], int32)));
          });
          x.push(t.syncThreads());
        });
      }
    });
  }
}

/** The fp32 score of a sort key (inverse of the order-preserving image; see spargeSelectDecodeKey). */
function decodeScore(b: BlockBuilder, key: Expr): Expr {
  const ordered = b.let('ordered', uint32, bitNot(cast(shr(key, 32), uint32)));
  const bits = b.let('bits', uint32, select(ne(bitAnd(ordered, 0x8000_0000), 0), bitAnd(ordered, 0x7fff_ffff), bitNot(ordered)));
  return b.let('score', float32, call('__uint_as_float', [bits], float32, { pure: true }));
}
