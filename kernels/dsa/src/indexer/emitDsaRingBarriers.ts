// The mbarriers of an indexer's key ring: full[s] (the producer's TMA bytes) and empty[s] (the consumers' warps).
import {
  add,
  fenceMbarrierInit,
  mbarrierInit,
  eq,
  pointer,
  cast,
  uint64,
  type BlockBuilder,
  type Expr,
  type Target,
} from '@tilekit/codegen';

/** The ring's barriers, addressed by stage, plus one extra barrier for a one-time load. */
export interface DsaRingBarriers {
  readonly full: (s: Expr) => Expr;
  readonly empty: (s: Expr) => Expr;
  readonly once: Expr;
}

/** Bytes the barriers of a `stages`-deep ring take: full[S], empty[S], once. */
export function dsaRingBarrierBytes(stages: number): number {
  return (2 * stages + 1) * 8;
}

/**
 * Declares the barriers at `base` (8-byte aligned shared memory) and has thread 0 initialise them:
 * full[s] expects one arrival (the producer's, with the TMA transaction bytes), empty[s] one per
 * consumer warp that reads stage s, `once` one arrival. The caller syncs the block afterwards.
 */
export function emitDsaRingBarriers(
  b: BlockBuilder,
  target: Target,
  v: { tid: Expr; base: Expr; stages: number; emptyWarps: number },
): DsaRingBarriers {
  const bars = b.let('bars', pointer(uint64), cast(v.base, pointer(uint64)));
  const full = (s: Expr): Expr => add(bars, s);
  const empty = (s: Expr): Expr => add(bars, add(s, v.stages));
  const once = add(bars, 2 * v.stages);
  b.if(eq(v.tid, 0), (x) => {
    x.forRange({ name: 's', to: v.stages, unroll: true }, (l, s) => {
      l.expr(mbarrierInit(target, full(s), 1));
      l.expr(mbarrierInit(target, empty(s), v.emptyWarps));
    });
    x.expr(mbarrierInit(target, once, 1));
    x.expr(fenceMbarrierInit(target));
  });
  return { full, empty, once };
}
