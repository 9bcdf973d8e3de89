// The block map our attention kernel really walked, as the `sparge` check's `block_map` aux tensor
// (uint8 (b, h, ⌈s/block_q⌉, ⌈s/block_k⌉), 1 = the key block is visited), and figures of it.
import { decodeSpargeLut, spargeCausalBlockAllowed, type SpargeBlockGrid, type SpargePipeline } from '@tilekit/kernel-sparge';

/** What the runner's block-map stage left on the device (host copies): the one-hot map, the delta LUT and its valid counts. */
export interface SpargeDeviceMaps {
  readonly map: Uint8Array;
  readonly lut: Int32Array;
  readonly validBlockNum: Int32Array;
}

/**
 * The visited map as the attention kernel sees it: `vsa` walks the LUT (validBlockNum entries of each
 * row, decoded and checked by decodeSpargeLut), `jenga` the one-hot map (a nonzero entry is visited).
 * @throws SpargeArgumentError / Error when the LUT or map is malformed.
 */
export function spargeVisitedMap(pipeline: SpargePipeline, grid: SpargeBlockGrid, maps: SpargeDeviceMaps): Uint8Array {
  if (pipeline === 'vsa') return decodeSpargeLut({ ...grid, lut: maps.lut, validBlockNum: maps.validBlockNum }).map;
  const cells = grid.batch * grid.nhead * grid.qBlocks * grid.kBlocks;
  if (maps.map.length !== cells) throw new Error(`block map: ${maps.map.length} entries, the grid has ${cells}`);
  return maps.map.map((x) => (x === 0 ? 0 : 1));
}

/** How many entries of two maps (or LUTs) of the same grid differ. */
export function spargeMapMismatches(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) throw new Error(`maps of ${a.length} and ${b.length} entries`);
  let n = 0;
  for (let x = 0; x < a.length; x++) if (a[x] !== b[x]) n++;
  return n;
}

/** The blocks dense attention visits: all, or (causal, top-left, sq = sk = s) those with a key some query of the block may see. */
export interface SpargeDensityShape {
  readonly s: number;
  readonly blockQ: number;
  readonly blockK: number;
  readonly causal: boolean;
}

/**
 * Achieved density of a visited map: visited blocks that dense attention visits too, over the blocks
 * dense attention visits (1 − density is the achieved sparsity). 0 for an empty grid.
 */
export function spargeMapDensity(map: Uint8Array, grid: SpargeBlockGrid, shape: SpargeDensityShape): number {
  let visited = 0;
  let allowed = 0;
  for (let r = 0; r < grid.batch * grid.nhead * grid.qBlocks; r++) {
    const i = r % grid.qBlocks;
    for (let j = 0; j < grid.kBlocks; j++) {
      if (shape.causal && !spargeCausalBlockAllowed(i, j, shape.blockQ, shape.blockK, shape.s)) continue;
      allowed++;
      visited += map[r * grid.kBlocks + j] === 1 ? 1 : 0;
    }
  }
  return allowed === 0 ? 0 : visited / allowed;
}
