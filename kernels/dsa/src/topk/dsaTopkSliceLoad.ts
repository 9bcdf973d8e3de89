// The one global read of the cluster top-k kernel: every thread loads its unroll · vector
// consecutive positions of its CTA's slice (thread t from t · unroll · vector, so thread order is
// position order and one block scan orders a selection), all loads issued before any key is formed,
// and keeps their keys in registers for every later pass. A chunk wholly inside the slice is one
// 16-byte load (vector 4); the chunk holding the slice's end is loaded position by position.
import { add, float32, index, infinity, int32, le, lt, mul, type BlockBuilder, type Expr } from '@tilekit/codegen';
import { emitDsaTopkKey } from './dsaTopkKey.ts';
import { emitDsaTopkChunkLoad, type DsaTopkLoadSite } from './dsaTopkRowSweep.ts';

/** A CTA's slice of a row, as its threads read it (logits: the slice's first; length: its positions inside the row's length). */
export type DsaTopkSlice = DsaTopkLoadSite;

/** What one thread holds of its slice: its keys in position order (0 past the slice) and the slice position of the first. */
export interface DsaTopkThreadKeys {
  readonly keys: readonly Expr[];
  readonly first: Expr;
}

/**
 * Emits this thread's loads of its unroll · vector positions of the slice and their keys
 * (emitDsaTopkKey: 0 for −∞, NaN and positions past the slice's length).
 */
export function emitDsaTopkSliceLoad(b: BlockBuilder, s: DsaTopkSlice): DsaTopkThreadKeys {
  const span = s.unroll * s.vector;
  const first = b.let('first', int32, mul(s.tid, span));
  const values = Array.from({ length: s.unroll }, (_, u) =>
    Array.from({ length: s.vector }, (_, j) => b.var(`x${u}_${j}`, float32, infinity(float32, { negative: true }))),
  );
  values.forEach((xs, u) => {
    const at = b.let(`at${u}`, int32, add(first, u * s.vector));
    const whole = (y: BlockBuilder): void => emitDsaTopkChunkLoad(y, s, at, xs);
    const guarded = (y: BlockBuilder): void =>
      xs.forEach((x, j) => y.if(lt(add(at, j), s.length), (z) => z.assign(x, index(s.logits, add(at, j)))));
    if (s.vector === 1) b.if(lt(at, s.length), whole);
    else b.if(le(add(at, s.vector), s.length), whole, guarded);
  });
  const keys = values.flatMap((xs, u) => xs.map((x, j) => emitDsaTopkKey(b, `key${u}_${j}`, x)));
  return { keys, first };
}
