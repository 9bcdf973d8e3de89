import {
  add,
  bitAnd,
  bool,
  call,
  cast,
  div,
  index,
  int16,
  int32,
  lit,
  lt,
  maxOf,
  mul,
  ne,
  pointer,
  select,
  shl,
  sub,
  uint32,
  uint8,
  type BlockBuilder,
  type Expr,
  type Target,
  type VarExpr,
} from '@tilekit/codegen';
import { FmhaError } from '../errors.ts';
import type { GenericAttentionMaskCode } from '../mask/genericAttentionMaskCode.ts';

/** `__popc(x)`: set bits of a 32-bit mask. */
const popc = (x: Expr): Expr => call('__popc', [x], int32, { pure: true });

/** What a key-tile walk knows of the block it runs in. */
export interface FmhaFwdKeyTileContext {
  readonly target: Target;
  /** `int` thread index in the block. */
  readonly tid: Expr;
  /** `uint8*` of the walk's own shared-memory area ({@link FmhaFwdKeyTileWalk.sharedBytes}, 16-byte aligned). */
  readonly shared: Expr;
  readonly m0: Expr;
  readonly tileM: number;
  readonly tileN: number;
}

/** A walk over a key-tile sequence, one cursor per loop (the producer's and the consumers'). */
export interface FmhaFwdKeyTileCursor {
  /** The first key row of tile `it` as a local named `name`; called once per iteration, in order (it = 0, 1, …). */
  row(l: BlockBuilder, it: Expr, name: string): Expr;
}

/**
 * Which key tiles a query tile visits, in what order (CK-tile's sparse-attention pipelines differ
 * from the dense one only here): the dense walk over the mask's key range, a walk over a
 * delta-encoded list of key blocks (VSA, Sparge's LUT) or over a one-hot block mask compacted on
 * chip (Jenga). Every walk visits tiles in ascending key order.
 */
export interface FmhaFwdKeyTileWalk {
  /** Shared memory the walk needs (0: none). */
  readonly sharedBytes: number;
  /** Code every thread runs after the barriers are initialised and before the block-wide sync. */
  emitBeforeSync(b: BlockBuilder, ctx: FmhaFwdKeyTileContext): void;
  /** After the sync: the `int` number of key tiles (a local every role reads). */
  emitIters(b: BlockBuilder, ctx: FmhaFwdKeyTileContext): VarExpr;
  /** A cursor for one loop over the tiles (declared before the loop). */
  emitCursor(b: BlockBuilder, ctx: FmhaFwdKeyTileContext): FmhaFwdKeyTileCursor;
}

/** The dense walk: every key tile of the mask's range (or of one split of it), contiguous. */
export class DenseKeyTileWalk implements FmhaFwdKeyTileWalk {
  readonly sharedBytes = 0;
  #start: VarExpr | undefined;

  readonly mask: GenericAttentionMaskCode;
  readonly split: { readonly count: Expr; readonly index: Expr } | undefined;

  constructor(mask: GenericAttentionMaskCode, split?: { readonly count: Expr; readonly index: Expr }) {
    this.mask = mask;
    this.split = split;
  }

  emitBeforeSync(): void {}

  emitIters(b: BlockBuilder, ctx: FmhaFwdKeyTileContext): VarExpr {
    b.comment('the key tiles this query tile visits (the mask decides)');
    const range =
      this.split === undefined
        ? this.mask.getTileRangeAlongX(ctx.m0, ctx.tileM, ctx.tileN)
        : this.mask.getTileRangeAlongXForSplit(ctx.m0, ctx.tileM, ctx.tileN, this.split.count, this.split.index);
    this.#start = b.let('k_start', int32, range.start);
    return b.let('k_iters', int32, maxOf(div(sub(range.end, this.#start), ctx.tileN), 0));
  }

  emitCursor(_b: BlockBuilder, ctx: FmhaFwdKeyTileContext): FmhaFwdKeyTileCursor {
    const start = this.#start;
    if (start === undefined) throw new FmhaError('fmha/key-tile-walk', 'DenseKeyTileWalk: emitIters must run before emitCursor');
    return { row: (l, it, name) => l.let(name, int32, add(start, mul(it, ctx.tileN))) };
  }
}

/**
 * The list walk (CK's VSA pipeline, Sparge's `vsa`): `count` key blocks of `tileN` rows, delta-encoded
 * as upstream's LUT row: block₀ = lut[0], blockₜ = blockₜ₋₁ + lut[t]. Each loop keeps its own running
 * block index, so nothing is staged: every thread reads the (L1-resident) LUT entry of its iteration.
 */
export class LutKeyTileWalk implements FmhaFwdKeyTileWalk {
  readonly sharedBytes = 0;

  /** `const int*` of this query tile's LUT row. */
  readonly lut: Expr;
  /** `int` valid entries of the row. */
  readonly count: Expr;

  constructor(lut: Expr, count: Expr) {
    this.lut = lut;
    this.count = count;
  }

  emitBeforeSync(): void {}

  emitIters(b: BlockBuilder): VarExpr {
    b.comment('the key blocks this query tile visits: a delta-encoded list (LUT row) of `count` blocks');
    return b.let('k_iters', int32, maxOf(this.count, 0));
  }

  emitCursor(b: BlockBuilder, ctx: FmhaFwdKeyTileContext): FmhaFwdKeyTileCursor {
    const block = b.declare('k_block', int32, 0, { storage: 'mutable' });
    return {
      row: (l, it, name) => {
        l.assign(block, add(block, index(this.lut, it)));
        return l.let(name, int32, mul(block, ctx.tileN));
      },
    };
  }
}

/**
 * The mask walk (CK's Jenga pipeline, Sparge's `jenga`): a one-hot row of `kBlocks` bytes (key block
 * j visited iff map[j] ≠ 0), compacted once per block into an ascending list of block indices in
 * shared memory by warp 0 (ballot + popcount per 32 entries), which every loop then reads. At most
 * `maxKeyBlocks` blocks (the list's shared memory is sized for it; the launcher checks kBlocks).
 */
export class BlockMaskKeyTileWalk implements FmhaFwdKeyTileWalk {
  readonly sharedBytes: number;
  #list: VarExpr | undefined;

  /** `const uint8*` of this query tile's block-mask row. */
  readonly map: Expr;
  /** `int` entries of the row. */
  readonly kBlocks: Expr;
  readonly maxKeyBlocks: number;

  constructor(map: Expr, kBlocks: Expr, maxKeyBlocks: number) {
    this.map = map;
    this.kBlocks = kBlocks;
    this.maxKeyBlocks = maxKeyBlocks;
    if (!Number.isSafeInteger(maxKeyBlocks) || maxKeyBlocks < 32 || maxKeyBlocks % 32 !== 0 || maxKeyBlocks > 1 << 15) {
      throw new FmhaError(
        'fmha/key-tile-walk',
        `BlockMaskKeyTileWalk maxKeyBlocks must be a multiple of 32 in [32, 32768] (got ${maxKeyBlocks})`,
      );
    }
    // int16 block indices, then the count (int32) after them.
    this.sharedBytes = 2 * maxKeyBlocks + 16;
  }

  #count(ctx: FmhaFwdKeyTileContext): Expr {
    return cast(add(ctx.shared, 2 * this.maxKeyBlocks), pointer(int32));
  }

  emitBeforeSync(b: BlockBuilder, ctx: FmhaFwdKeyTileContext): void {
    const t = ctx.target;
    b.comment('warp 0 compacts the block-mask row into an ascending list of key blocks in shared memory');
    const list = b.let('k_list', pointer(int16), cast(ctx.shared, pointer(int16)));
    b.if(lt(ctx.tid, 32), (w) => {
      const lane = w.let('lane', int32, ctx.tid);
      const n = w.declare('k_listed', int32, 0, { storage: 'mutable' });
      w.forRange({ name: 'j0', from: 0, to: this.kBlocks, step: 32 }, (l, j0) => {
        const j = l.let('j', int32, add(j0, lane));
        const on = l.let('on', bool, lt(j, this.kBlocks));
        // The conditional keeps the read inside the row (C++ evaluates one arm).
        const visited = l.let('visited', bool, select(on, ne(index(this.map, j), lit(0, uint8)), lit(false, bool)));
        const ballot = l.let('ballot', uint32, t.ballot(visited));
        const before = l.let('before', int32, popc(bitAnd(ballot, sub(shl(lit(1, uint32), cast(lane, uint32)), lit(1, uint32)))));
        l.if(visited, (r) => r.assign(index(list, add(n, before)), cast(j, int16)));
        l.assign(n, add(n, popc(ballot)));
      });
      w.if(lt(lane, 1), (z) => z.assign(index(this.#count(ctx), 0), n));
    });
    this.#list = list;
  }

  emitIters(b: BlockBuilder, ctx: FmhaFwdKeyTileContext): VarExpr {
    return b.let('k_iters', int32, index(this.#count(ctx), 0));
  }

  emitCursor(_b: BlockBuilder, ctx: FmhaFwdKeyTileContext): FmhaFwdKeyTileCursor {
    const list = this.#list;
    if (list === undefined) throw new FmhaError('fmha/key-tile-walk', 'BlockMaskKeyTileWalk: emitBeforeSync must run before emitCursor');
    return { row: (l, it, name) => l.let(name, int32, mul(cast(index(list, it), int32), ctx.tileN)) };
  }
}
