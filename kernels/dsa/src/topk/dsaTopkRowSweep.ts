// One sweep over a row of logits in position order: tiles of threads × unroll × vector positions,
// every thread of the block running every tile (so warps may vote and the block may scan inside).
// Thread t owns the unroll · vector consecutive positions from tile + t · unroll · vector (so one
// block scan per tile orders them), loaded as `unroll` chunks of `vector` (16-byte loads when
// whole: a warp reads 32 · unroll · 16 contiguous bytes), all issued before any is used.
import {
  add,
  and,
  assignStmt,
  bool,
  cast,
  deref,
  div,
  float32,
  ge,
  gt,
  index,
  infinity,
  int32,
  le,
  lit,
  lt,
  member,
  mul,
  opaque,
  pointer,
  select,
  sub,
  type BlockBuilder,
  type Expr,
  type Target,
} from '@tilekit/codegen';
import { emitDsaTopkKey } from './dsaTopkKey.ts';

/** Positions each thread loads per chunk. */
export type DsaTopkVector = 1 | 4;

const float4 = opaque('float4');

/** What a thread loads logits from: its unroll chunks of `vector` positions of a run of logits (a row, or a CTA's slice of one). */
export interface DsaTopkLoadSite {
  readonly target: Target;
  readonly vector: DsaTopkVector;
  /** Chunks of `vector` positions per thread (per tile, for a row sweep): loads each thread has in flight. */
  readonly unroll: number;
  readonly tid: Expr;
  /** const float* to the run's first logit (16-byte aligned when vector is 4). */
  readonly logits: Expr;
  /** int32 positions of the run (a row: ≤ 2^30; a slice: inside the row's length, ≤ 0 for none). */
  readonly length: Expr;
}

/** A row to sweep: every thread of the block runs every tile. */
export interface DsaTopkRow extends DsaTopkLoadSite {
  readonly threads: number;
}

/** Emits one whole chunk's load into `xs` (`vector` float vars): a scalar load, or one 16-byte load (vector 4). */
export function emitDsaTopkChunkLoad(
  b: BlockBuilder,
  site: Pick<DsaTopkLoadSite, 'vector' | 'logits'>,
  at: Expr,
  xs: readonly Expr[],
): void {
  if (site.vector === 1) {
    b.assign(xs[0]!, index(site.logits, at));
    return;
  }
  const q = b.let('q', float4, deref(cast(add(site.logits, at), pointer(float4, { const: true }))));
  ['x', 'y', 'z', 'w'].forEach((f, j) => b.assign(xs[j]!, member(q, f, float32)));
}

/** One chunk of a tile as a thread sees it: its logits (−∞ past the row), their keys (0 past the row) and the position of the first. */
export interface DsaTopkChunk {
  readonly values: readonly Expr[];
  readonly keys: readonly Expr[];
  readonly first: Expr;
}

/**
 * Loads this thread's logits of the tile at `tile` into `into` ([unroll][vector] float vars, which
 * hold −∞ where nothing is loaded): one 16-byte load per chunk when the whole tile lies in the row,
 * else one guarded load each.
 */
function loadTile(b: BlockBuilder, row: DsaTopkRow, tile: Expr, into: readonly (readonly Expr[])[]): void {
  const span = row.unroll * row.vector;
  const whole = b.let('whole', bool, le(add(tile, row.threads * span), row.length));
  const base = b.let('at', int32, add(tile, mul(row.tid, span)));
  const wholeLoads = (y: BlockBuilder): void => into.forEach((xs, u) => emitDsaTopkChunkLoad(y, row, add(base, u * row.vector), xs));
  const guarded = (y: BlockBuilder): void =>
    into.forEach((xs, u) =>
      xs.forEach((x, j) => {
        const p = add(base, u * row.vector + j);
        y.assign(x, infinity(float32, { negative: true }));
        y.if(lt(p, row.length), (z) => z.assign(x, index(row.logits, p)));
      }),
    );
  b.if(whole, wholeLoads, guarded);
}

/** What a sweep runs on each tile: this thread's chunks of it, in position order. */
export type DsaTopkSweepBody = (x: BlockBuilder, chunks: readonly DsaTopkChunk[]) => void;

/** This thread's chunks of the tile at `tile` (loaded, keyed, their first positions), handed to `body`. */
function emitTile(x: BlockBuilder, row: DsaTopkRow, tile: Expr, body: DsaTopkSweepBody): void {
  const span = row.unroll * row.vector;
  const values = Array.from({ length: row.unroll }, (_, u) =>
    Array.from({ length: row.vector }, (_, j) => x.var(`x${u}_${j}`, float32, null)),
  );
  loadTile(x, row, tile, values);
  const base = x.let('first', int32, add(tile, mul(row.tid, span)));
  const chunks = values.map((xs, u) => ({
    values: xs,
    first: x.let(`first${u}`, int32, add(base, u * row.vector)),
    keys: xs.map((value, j) => emitDsaTopkKey(x, `key${u}_${j}`, value)),
  }));
  body(x, chunks);
}

/** The tile walk of a sweep: the first tile's position, whether a tile is in the row, and the step between tiles. */
interface TileWalk {
  readonly first: Expr;
  readonly inRow: (tile: Expr) => Expr;
  readonly op: '+=' | '-=';
}

/** The loop over the tiles of `walk`, `body` on each (while `until` holds too, when given). */
function emitTileLoop(b: BlockBuilder, row: DsaTopkRow, walk: TileWalk, body: DsaTopkSweepBody, until?: Expr): void {
  const step = row.threads * row.unroll * row.vector;
  b.for(
    { name: 'tile', type: int32, value: walk.first },
    (v) => (until === undefined ? walk.inRow(v!) : and(walk.inRow(v!), until)),
    (v) => assignStmt(v!, cast(step, int32), walk.op),
    (x, v) => emitTile(x, row, v!, body),
  );
}

/**
 * Emits the sweep: for each tile (while `until` holds too, when given: a block-uniform condition),
 * `body` gets this thread's chunks in position order (values, and keys by emitDsaTopkKey: 0 past
 * the row's length); thread t's positions all come before thread t + 1's. The loop is
 * block-uniform. (Prefetching the next tile into registers measured slower on the H200: the
 * passes are bound by instruction issue, not by load latency.)
 */
export function emitDsaTopkRowSweep(b: BlockBuilder, row: DsaTopkRow, body: DsaTopkSweepBody, until?: Expr): void {
  emitTileLoop(b, row, { first: lit(0, int32), inRow: (v) => lt(v, row.length), op: '+=' }, body, until);
}

/**
 * Emits the sweep with its tiles in the opposite order: the last tile of the row first, down to
 * the tile at 0 (while `until` holds too); inside a tile, as emitDsaTopkRowSweep (thread t's
 * positions before thread t + 1's). A second read of a row the block has just swept forward
 * starts where the first ended, on the logits most likely still in L2.
 */
export function emitDsaTopkRowSweepBackward(b: BlockBuilder, row: DsaTopkRow, body: DsaTopkSweepBody, until?: Expr): void {
  const step = row.threads * row.unroll * row.vector;
  const last = select(gt(row.length, 0), mul(div(sub(row.length, 1), step), step), -1);
  emitTileLoop(b, row, { first: last, inRow: (v) => ge(v, 0), op: '-=' }, body, until);
}
