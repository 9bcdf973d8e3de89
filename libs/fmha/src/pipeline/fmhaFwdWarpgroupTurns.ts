import {
  add,
  eq,
  int32,
  lit,
  namedBarrierArrive,
  namedBarrierSync,
  sub,
  type BlockBuilder,
  type Expr,
  type Target,
} from '@tilekit/codegen';

/** Brackets a schedule's GEMM issues (the ping-pong's turns; nothing for the other schedules). */
export interface FmhaFwdIssueTurns {
  /** Before the first turn (emitted once, where the key loop runs). */
  start(l: BlockBuilder): void;
  /** `issue` as one turn (returns what it returns): it emits into `l` itself, so its locals stay visible after the turn. */
  turn<T>(l: BlockBuilder, issue: () => T): T;
  /** After the last turn. */
  finish(l: BlockBuilder): void;
}

/** No turns: the issues as they are. */
export const FMHA_FWD_NO_TURNS: FmhaFwdIssueTurns = Object.freeze({
  start: () => undefined,
  turn: <T>(_l: BlockBuilder, issue: () => T): T => issue(),
  finish: () => undefined,
});

/**
 * Two consumer warpgroups take turns issuing their GEMMs (FlashAttention-3's ping-pong), so that one
 * warpgroup's wgmmas run while the other does its softmax. Warpgroup w waits on named barrier
 * `firstBarrier + w` before its issues and arrives on the other's barrier after them; warpgroup 1
 * arrives on warpgroup 0's barrier at the start (0 goes first), and warpgroup 0 waits once more at the
 * end for warpgroup 1's last arrival, so every barrier phase completes. Both warpgroups must take the
 * same number of turns (the key-tile count is the block's).
 */
export class FmhaFwdWarpgroupTurns implements FmhaFwdIssueTurns {
  static readonly THREADS = 256;
  readonly #target: Target;
  readonly #warpgroup: Expr;
  readonly #firstBarrier: number;

  constructor(target: Target, warpgroup: Expr, firstBarrier: number) {
    this.#target = target;
    this.#warpgroup = warpgroup;
    this.#firstBarrier = firstBarrier;
  }

  start(l: BlockBuilder): void {
    l.comment('ping-pong: warpgroup 0 issues first');
    l.if(eq(this.#warpgroup, 1), (w) => w.expr(namedBarrierArrive(this.#target, this.#firstBarrier, FmhaFwdWarpgroupTurns.THREADS)));
  }

  turn<T>(l: BlockBuilder, issue: () => T): T {
    const mine = add(lit(this.#firstBarrier, int32), this.#warpgroup);
    const other = sub(lit(this.#firstBarrier + 1, int32), this.#warpgroup);
    l.comment("ping-pong: this warpgroup's turn to issue");
    l.expr(namedBarrierSync(this.#target, mine, FmhaFwdWarpgroupTurns.THREADS));
    const issued = issue();
    l.expr(namedBarrierArrive(this.#target, other, FmhaFwdWarpgroupTurns.THREADS));
    return issued;
  }

  finish(l: BlockBuilder): void {
    l.comment("ping-pong: warpgroup 0 takes warpgroup 1's last hand-over");
    l.if(eq(this.#warpgroup, 0), (w) => w.expr(namedBarrierSync(this.#target, this.#firstBarrier, FmhaFwdWarpgroupTurns.THREADS)));
  }
}
