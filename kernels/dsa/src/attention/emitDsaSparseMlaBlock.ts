// The skeleton every sparse MLA kernel shares after its block has found its rows: shared memory, the key ring's
// barriers, then the two roles — a producer warpgroup that fills the ring and the two consumer warpgroups (which load
// the resident Q).
import { declareAlignedDynamicShared, ge, namedBarrierSync, type BlockBuilder, type Expr, type Target } from '@tilekit/codegen';
import { DSA_SPARSE_MLA_PRODUCER_THREADS, type DsaSparseMlaArgs, type DsaSparseMlaCta } from './dsaSparseMlaCta.ts';
import type { DsaSparseMlaSmem } from './dsaSparseMlaSmem.ts';
import { emitDsaSparseMlaLoadQ } from './emitDsaSparseMlaLoadQ.ts';
import { emitDsaSparseMlaRing } from './emitDsaSparseMlaRing.ts';

/** The named barrier the consumers meet at once Q is in (0 is __syncthreads; the pairwise consumers use 1–2, the row-sum join 3). */
const DSA_SPARSE_MLA_Q_BARRIER = 6;

/** What {@link emitDsaSparseMlaBlock} composes. */
export interface DsaSparseMlaBlockSpec {
  /** Consumer threads (the block's first; the producer's 128 follow). */
  readonly consumers: number;
  readonly layout: DsaSparseMlaSmem;
  /** The comment describing the shared memory's regions. */
  readonly smemComment: string;
  /** `int` thread index; `const bf16*` q rows and the block's first (`int64`); its index entries and key tiles (`int`). */
  readonly tid: Expr;
  readonly q: Expr;
  readonly qRow0: Expr;
  readonly len: Expr;
  readonly tiles: Expr;
  /**
   * Arrivals that complete a phase of each stage's full and empty barrier (default: the producer's 128 threads once,
   * every consumer thread once).
   */
  readonly arrivals?: { readonly full: number; readonly empty: number };
  /** More mbarriers (byte offset, arrivals per phase) initialised with the ring's, e.g. the consumers' hand-offs. */
  readonly moreBarriers?: readonly { readonly at: number; readonly arrivals: number }[];
  /** The arguments the roles read, emitted once the barriers are published. */
  readonly args: (b: BlockBuilder) => DsaSparseMlaArgs;
  /** The producer warpgroup (threads ≥ consumers) and the consumer warpgroups. */
  readonly producer: (b: BlockBuilder, cta: DsaSparseMlaCta) => void;
  readonly consumer: (b: BlockBuilder, cta: DsaSparseMlaCta) => void;
}

/**
 * Emits the shared skeleton: the 1024-aligned dynamic shared memory, the ring's barriers initialised by thread 0, one
 * __syncthreads publishing them, the roles' arguments, then the producer (which starts gathering at once) or the
 * consumers, which first copy Q in themselves and meet at a named barrier (Q's load overlaps the first gather).
 */
export function emitDsaSparseMlaBlock(b: BlockBuilder, t: Target, s: DsaSparseMlaBlockSpec): void {
  b.comment(s.smemComment);
  const { smem, smemAddr } = declareAlignedDynamicShared(b, t, 'dsa_mla_smem');
  const ring = emitDsaSparseMlaRing(b, t, {
    smem,
    layout: s.layout,
    tid: s.tid,
    producers: s.arrivals?.full ?? DSA_SPARSE_MLA_PRODUCER_THREADS,
    consumers: s.arrivals?.empty ?? s.consumers,
    ...(s.moreBarriers === undefined ? {} : { more: s.moreBarriers }),
  });
  b.push(t.syncThreads());
  const args = s.args(b);
  const cta: DsaSparseMlaCta = { target: t, args, layout: s.layout, tid: s.tid, smem, smemAddr, len: s.len, tiles: s.tiles, ...ring };
  b.if(
    ge(s.tid, s.consumers),
    (prod) => s.producer(prod, cta),
    (cons) => {
      emitDsaSparseMlaLoadQ(cons, t, { q: s.q, row0: s.qRow0, tid: s.tid, threads: s.consumers, smem, layout: s.layout });
      cons.expr(namedBarrierSync(t, DSA_SPARSE_MLA_Q_BARRIER, s.consumers));
      s.consumer(cons, cta);
    },
  );
}
