import { add, div, int32, minOf, mod, mul, sub, type BlockBuilder, type Expr } from '@tilekit/codegen';
import { BlockGemmPolicyError } from '../block/blockGemmWgmmaSs.ts';

/** The block tile and the rasterization group of {@link GroupedTilePartitioner}. */
export interface GroupedTilePartitionPolicy {
  readonly tileM: number;
  readonly tileN: number;
  /** M tiles per group: consecutive block ids sweep the M tiles of a group, then move along N. */
  readonly groupM: number;
}

/**
 * CK-tile's spatially local tile partitioner (grouped rasterization): the ⌈M/tileM⌉·⌈N/tileN⌉
 * block tiles are numbered so that `groupM` M tiles × all N tiles form a group, walked M-fastest
 * inside it (the last group keeps the M tiles that are left): neighbouring blocks share A rows and B
 * columns in L2. The TS model (`tileOf`) and the emitted lets (`emitTileOrigin`) are twins: the
 * pipelines emit these, their evaluators call `tileOf`. Postcondition (property-tested): `tileOf` is
 * a bijection from [0, gridSize) onto the tiles.
 */
export class GroupedTilePartitioner {
  readonly policy: GroupedTilePartitionPolicy;

  constructor(policy: GroupedTilePartitionPolicy, what = 'GroupedTilePartitioner') {
    for (const key of ['tileM', 'tileN', 'groupM'] as const) {
      const v = policy[key];
      if (!Number.isSafeInteger(v) || v < 1) throw new BlockGemmPolicyError(`${what} ${key}`, 'must be a positive integer', String(v));
    }
    this.policy = policy;
  }

  /** Block tiles of an M×N problem (the grid's x extent, one block per tile). */
  gridSize(m: number, n: number): number {
    return Math.ceil(m / this.policy.tileM) * Math.ceil(n / this.policy.tileN);
  }

  /** The block tile (tm, tn) of tile id `pid`: the same grouped rasterization as the emitted code. */
  tileOf(pid: number, m: number, n: number): [number, number] {
    const { tileM, tileN, groupM } = this.policy;
    const tilesM = Math.ceil(m / tileM);
    const width = groupM * Math.ceil(n / tileN);
    const firstM = Math.floor(pid / width) * groupM;
    const rows = Math.min(tilesM - firstM, groupM);
    return [firstM + ((pid % width) % rows), Math.floor((pid % width) / rows)];
  }

  /** Emits `tiles_m`, `tiles_n` (the tile counts of the `int` sizes m and n). */
  emitTileCounts(b: BlockBuilder, m: Expr, n: Expr): { readonly tilesM: Expr; readonly tilesN: Expr } {
    const { tileM, tileN } = this.policy;
    return {
      tilesM: b.let('tiles_m', int32, div(add(m, tileM - 1), tileM)),
      tilesN: b.let('tiles_n', int32, div(add(n, tileN - 1), tileN)),
    };
  }

  /** Emits `group_width`: tile ids per group (groupM · tiles_n). */
  emitGroupWidth(b: BlockBuilder, tilesN: Expr): Expr {
    return b.let('group_width', int32, mul(tilesN, this.policy.groupM));
  }

  /** Emits the element origin (`m0`, `n0`) of tile id `pid` in `b` (the twin of {@link tileOf}). */
  emitTileOrigin(b: BlockBuilder, pid: Expr, width: Expr, tilesM: Expr): { readonly m0: Expr; readonly n0: Expr } {
    const { tileM, tileN, groupM } = this.policy;
    const firstM = b.let('first_m', int32, mul(div(pid, width), groupM));
    const rows = b.let('group_rows', int32, minOf(sub(tilesM, firstM), groupM));
    const inGroup = b.let('in_group', int32, mod(pid, width));
    return { m0: b.let('m0', int32, mul(add(firstM, mod(inGroup, rows)), tileM)), n0: b.let('n0', int32, mul(div(inGroup, rows), tileN)) };
  }
}
