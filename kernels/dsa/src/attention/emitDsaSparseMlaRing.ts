// The key ring's barriers of a sparse MLA block: full[s] (the producer's arrivals) and empty[s] (the consumers'),
// initialised by thread 0 before the block's first sync.
import {
  add,
  cast,
  eq,
  fenceMbarrierInit,
  int32,
  lit,
  mbarrierInit,
  pointer,
  uint64,
  type BlockBuilder,
  type Expr,
  type Target,
} from '@tilekit/codegen';
import { DSA_SPARSE_MLA_STAGES, type DsaSparseMlaSmem } from './dsaSparseMlaSmem.ts';

/** The ring's barrier addresses by stage. */
export interface DsaSparseMlaRing {
  readonly full: (s: Expr) => Expr;
  readonly empty: (s: Expr) => Expr;
}

/**
 * Declares the barriers and emits their initialisation by thread 0 (`producers` and `consumers` arrivals per phase),
 * fenced for the other threads; the caller's __syncthreads publishes them.
 */
export function emitDsaSparseMlaRing(
  b: BlockBuilder,
  t: Target,
  v: {
    readonly smem: Expr;
    readonly layout: DsaSparseMlaSmem;
    readonly tid: Expr;
    readonly producers: number;
    readonly consumers: number;
    /** More barriers thread 0 initialises with the ring's: byte offset in shared memory and arrivals per phase. */
    readonly more?: readonly { readonly at: number; readonly arrivals: number }[];
  },
): DsaSparseMlaRing {
  const bars = b.let('bars', pointer(uint64), cast(add(v.smem, v.layout.barriers), pointer(uint64)));
  const full = (s: Expr): Expr => add(bars, s);
  const empty = (s: Expr): Expr => add(bars, add(s, DSA_SPARSE_MLA_STAGES));
  b.if(eq(v.tid, 0), (x) => {
    for (let s = 0; s < DSA_SPARSE_MLA_STAGES; s++) {
      x.expr(mbarrierInit(t, full(lit(s, int32)), v.producers));
      x.expr(mbarrierInit(t, empty(lit(s, int32)), v.consumers));
    }
    for (const m of v.more ?? []) x.expr(mbarrierInit(t, cast(add(v.smem, m.at), pointer(uint64)), m.arrivals));
    x.expr(fenceMbarrierInit(t));
  });
  return { full, empty };
}
