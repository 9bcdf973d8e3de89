// example_sparge's sparsity report: achieved sparsity of a block map, per head, and the visited-blocks histogram.
import { spargeCausalBlockAllowed, type SpargeBlockMap, type SpargePlan } from '@tilekit/kernel-sparge';
import type { SpargeExampleInputs } from './spargeExampleInputs.ts';

/** Achieved sparsity of a block map, per head, and how many query blocks visit n key blocks. */
export interface SpargeMapSummary {
  /** 1 − visited / blocks dense attention visits (causal: the causally allowed blocks). */
  readonly sparsity: number;
  readonly perHead: readonly number[];
  /** histogram[n] = query blocks (over b, h) that visit n key blocks. */
  readonly histogram: readonly number[];
}

/** Summarises a block map [b][h][qBlocks][kBlocks] of a batch-mode problem with sq query rows. */
export function summarizeSpargeMap(
  map: SpargeBlockMap,
  blockQ: number,
  blockK: number,
  seqlenQ: number,
  isCausal: boolean,
): SpargeMapSummary {
  const { batch, nhead, qBlocks, kBlocks } = map;
  const visitedPerHead = new Float64Array(nhead);
  const densePerHead = new Float64Array(nhead);
  const histogram = new Array<number>(kBlocks + 1).fill(0);
  for (let b = 0; b < batch; b++) {
    for (let h = 0; h < nhead; h++) {
      for (let i = 0; i < qBlocks; i++) {
        const row = ((b * nhead + h) * qBlocks + i) * kBlocks;
        let n = 0;
        for (let j = 0; j < kBlocks; j++) {
          if (!isCausal || spargeCausalBlockAllowed(i, j, blockQ, blockK, seqlenQ)) densePerHead[h]!++;
          n += map.map[row + j]!;
        }
        visitedPerHead[h]! += n;
        histogram[n]!++;
      }
    }
  }
  const visited = visitedPerHead.reduce((a, x) => a + x, 0);
  const dense = densePerHead.reduce((a, x) => a + x, 0);
  return { sparsity: 1 - visited / dense, perHead: Array.from(visitedPerHead, (v, h) => 1 - v / densePerHead[h]!), histogram };
}

/** The sparsity report lines of a summary (per head only for h ≤ 8; the histogram in at most 16 buckets). */
export function formatSpargeMapSummary(s: SpargeMapSummary, source: string): string[] {
  const lines = [`achieved sparsity (${source}): ${s.sparsity.toFixed(4)}`];
  if (s.perHead.length <= 8) lines.push(`  per head: ${s.perHead.map((x, h) => `h${h} ${x.toFixed(4)}`).join(', ')}`);
  const counts = s.histogram;
  const width = Math.ceil(counts.length / 16);
  const buckets: string[] = [];
  for (let lo = 0; lo < counts.length; lo += width) {
    const hi = Math.min(counts.length, lo + width) - 1;
    const rows = counts.slice(lo, hi + 1).reduce((a, x) => a + x, 0);
    if (rows > 0) buckets.push(`${lo === hi ? lo : `${lo}-${hi}`}: ${rows}`);
  }
  lines.push(`  visited key blocks per query block (blocks: query blocks): ${buckets.join(', ')}`);
  return lines;
}

/** The sparsity report of `map` (from `source`), one line at a time. */
export function logSparsity(
  plan: SpargePlan,
  inputs: SpargeExampleInputs,
  map: SpargeBlockMap,
  source: string,
  log: (line: string) => void,
): void {
  const r = plan.params;
  for (const line of formatSpargeMapSummary(summarizeSpargeMap(map, r.blockQ, r.blockK, inputs.shape.seqlenQ, r.isCausal), source))
    log(line);
}
