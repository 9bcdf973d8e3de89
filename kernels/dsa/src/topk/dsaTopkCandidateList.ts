// Appending keys to the shared candidate list: one atomic per warp on the list's counter (a ballot
// of the lanes that append, the leader reserves their slots), slots past the capacity dropped.
import {
  add,
  bitAnd,
  call,
  cast,
  eq,
  index,
  int32,
  lt,
  ne,
  shl,
  sub,
  uint32,
  type BlockBuilder,
  type Expr,
  type Target,
} from '@tilekit/codegen';

/** The shared candidate list: its keys, the counter of appended keys and the capacity. */
export interface DsaTopkCandidateList {
  /** uint32 keys, `capacity` of them. */
  readonly keys: Expr;
  /** Shared int32: keys appended so far (also those past the capacity). */
  readonly counter: Expr;
  readonly capacity: number;
}

const popc = (x: Expr): Expr => call('__popc', [x], int32, { pure: true });

/**
 * Emits: every lane where `active` holds appends `key`; the counter grows by their number, and a
 * key whose slot is ≥ the capacity is dropped (the caller compares the count it expects with the
 * capacity to know whether the list is whole). Every lane of the warp must run it.
 */
export function emitDsaTopkListAppend(b: BlockBuilder, t: Target, list: DsaTopkCandidateList, active: Expr, key: Expr, lane: Expr): void {
  const mask = b.let('append_mask', uint32, t.ballot(active));
  b.if(ne(mask, 0), (x) => {
    const leader = x.let('append_leader', int32, sub(call('__ffs', [mask], int32, { pure: true }), 1));
    const reserved = x.var('append_base', int32, 0);
    x.if(eq(lane, leader), (y) => y.assign(reserved, call('atomicAdd', [list.counter, popc(mask)], int32)));
    const base = x.let('append_at', int32, t.shfl(reserved, leader));
    x.if(active, (y) => {
      const before = bitAnd(mask, sub(shl(cast(1, uint32), lane), 1));
      const slot = y.let('append_slot', int32, add(base, popc(before)));
      y.if(lt(slot, list.capacity), (z) => z.assign(index(list.keys, slot), key));
    });
  });
}
