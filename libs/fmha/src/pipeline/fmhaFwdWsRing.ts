import {
  add,
  bitAnd,
  cast,
  div,
  eq,
  fenceMbarrierInit,
  int32,
  mbarrierInit,
  mul,
  sub,
  uint32,
  type BlockBuilder,
  type Expr,
  type Target,
} from '@tilekit/codegen';

/** Where key tile `it` sits in the ring: stage s = it mod S and the parity of round it / S. */
export interface FmhaFwdWsStage {
  readonly s: Expr;
  readonly parity: Expr;
}

/**
 * The mbarriers of the sm_90a forward's TMA ring (`uint64` array `bars` in shared memory): Q's
 * full barrier, then per stage K full, K empty, V full and V empty (S of each). The producer waits
 * an empty barrier and arms the full one; each consumer warp arrives on the empty ones.
 */
export class FmhaFwdWsRing {
  readonly target: Target;
  readonly stages: number;
  readonly bars: Expr;
  /** Q's full barrier (Q is loaded once). */
  readonly qFull: Expr;
  /** The first barrier after the ring's (a Q·Kᵀ source's own start here). */
  readonly end: Expr;

  constructor(target: Target, bars: Expr, stages: number) {
    this.target = target;
    this.bars = bars;
    this.stages = stages;
    this.qFull = bars;
    this.end = add(bars, 1 + 4 * stages);
  }

  kFull(s: Expr | number): Expr {
    return add(this.bars, add(1, s));
  }

  kEmpty(s: Expr | number): Expr {
    return add(this.bars, add(1 + this.stages, s));
  }

  vFull(s: Expr | number): Expr {
    return add(this.bars, add(1 + 2 * this.stages, s));
  }

  vEmpty(s: Expr | number): Expr {
    return add(this.bars, add(1 + 3 * this.stages, s));
  }

  /**
   * Thread 0 initialises every barrier: full ones for one arrival, K's empty ones for the consumer
   * warps that read K (`consumerWarps.k`), V's for those that read V; `more` initialises barriers
   * of others (a Q·Kᵀ source's, an output split's) before the fence.
   */
  emitInit(b: BlockBuilder, tid: Expr, consumerWarps: { readonly k: number; readonly v: number }, more?: (t: BlockBuilder) => void): void {
    const target = this.target;
    b.if(eq(tid, 0), (t) => {
      t.expr(mbarrierInit(target, this.qFull, 1));
      t.forRange({ name: 's', to: this.stages, unroll: true }, (l, s) => {
        l.expr(mbarrierInit(target, this.kFull(s), 1));
        l.expr(mbarrierInit(target, this.kEmpty(s), consumerWarps.k));
        l.expr(mbarrierInit(target, this.vFull(s), 1));
        l.expr(mbarrierInit(target, this.vEmpty(s), consumerWarps.v));
      });
      more?.(t);
      t.expr(fenceMbarrierInit(target));
    });
  }

  /** The stage and parity of key tile `it`, as locals `s` and `parity`. */
  stageOf(bb: BlockBuilder, it: Expr): FmhaFwdWsStage {
    const S = this.stages;
    return {
      s: bb.let('s', int32, S === 2 || S === 4 ? bitAnd(it, S - 1) : sub(it, mul(div(it, S), S))),
      parity: bb.let('parity', uint32, cast(bitAnd(div(it, S), 1), uint32)),
    };
  }
}
