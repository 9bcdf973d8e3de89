// The split-KV heuristic: how many key splits make a problem fill the GPU (FlashAttention-2's
// wave-efficiency rule in spirit, CK's kMaxSplits bound).
import { keysPerSplit, FMHA_FWD_MAX_SPLITS, type CheckedFmhaFwdProblem } from '@tilekit/fmha';
import { ArgumentError } from '@tilekit/numeric';

/** Block tile rows (queries) and key rows per tile of the instances (see FMHA_FWD_TILES). */
export interface FmhaFwdSplitTiles {
  readonly tileM: number;
  readonly tileN: number;
}

/** Grids that already fill this fraction of one wave are not split (FlashAttention-2's 0.8). */
export const FMHA_FWD_SPLIT_FILL = 0.8;

/** Of the split counts whose wave efficiency is within this fraction of the best, the smallest wins. */
export const FMHA_FWD_SPLIT_EFFICIENCY = 0.85;

/**
 * The number of key splits for `problem` on a GPU of `smCount` SMs (one block per SM: the
 * instances need most of an SM's registers), with the instance's tiles. Blocks = batch · heads ·
 * query tiles (as launched: query tiles of the longest sequence). When blocks ≥ 0.8·SMs: 1.
 * Otherwise each count s from 1 to min(128, key tiles, ⌈2·SMs / blocks⌉) (every split at least one
 * key tile, at most ~2 waves) is scored by the wave efficiency w / ⌈w⌉ of the splits that get keys
 * (e, from the kernel's whole-tile split size), w = blocks·e / SMs; the e of the smallest s within
 * 0.85 of the best score is returned (so no split is empty). Postconditions (property-tested): 1 ≤ s ≤
 * 128; s ≤ key tiles (s = 1 without keys); s = 1 when blocks ≥ 0.8·SMs; blocks·s ≤ 2·SMs + blocks.
 * @throws ArgumentError for a non-positive smCount or tile.
 */
export function chooseFmhaFwdSplits(problem: CheckedFmhaFwdProblem, smCount: number, tiles: FmhaFwdSplitTiles): number {
  if (!Number.isSafeInteger(smCount) || smCount < 1) throw new ArgumentError('smCount', 'must be a positive integer', smCount);
  for (const key of ['tileM', 'tileN'] as const) {
    if (!Number.isSafeInteger(tiles[key]) || tiles[key] < 1)
      throw new ArgumentError(`tiles.${key}`, 'must be a positive integer', tiles[key]);
  }
  const blocks = problem.batch * problem.nheadQ * Math.max(1, Math.ceil(problem.seqlenQ / tiles.tileM));
  const keyTiles = Math.ceil(problem.seqlenK / tiles.tileN);
  if (keyTiles <= 1 || blocks >= FMHA_FWD_SPLIT_FILL * smCount) return 1;
  const most = Math.min(FMHA_FWD_MAX_SPLITS, keyTiles, Math.ceil((2 * smCount) / blocks));
  // The kernel gives each split ⌈⌈sk / s⌉ / tileN⌉ key tiles, so s splits may leave trailing ones
  // empty: score the count that actually has keys.
  const effective = (s: number): number => Math.max(1, Math.ceil(problem.seqlenK / keysPerSplit(problem.seqlenK, tiles.tileN, s)));
  const efficiency = (s: number): number => {
    const waves = (blocks * effective(s)) / smCount;
    return waves / Math.ceil(waves);
  };
  let best = 0;
  for (let s = 1; s <= most; s++) best = Math.max(best, efficiency(s));
  for (let s = 1; s <= most; s++) if (efficiency(s) >= FMHA_FWD_SPLIT_EFFICIENCY * best) return effective(s);
  return 1;
}

/** `problem` with `numSplits` key splits (the rest unchanged), frozen. */
export function withFmhaFwdSplits<P extends CheckedFmhaFwdProblem>(problem: P, numSplits: number): P {
  if (!Number.isSafeInteger(numSplits) || numSplits < 1 || numSplits > FMHA_FWD_MAX_SPLITS)
    throw new ArgumentError('numSplits', `must be an integer in [1, ${FMHA_FWD_MAX_SPLITS}]`, numSplits);
  return Object.freeze({ ...problem, numSplits, splitKvAuto: false });
}
