import { SpargeArgumentError } from './spargeArgumentError.ts';
import type { SpargePerHead } from './spargeHyperparameters.ts';
import { decodeSpargeLut, type SpargeBlockMap, type SpargeLut } from './spargeLut.ts';
import {
  checkSpargeValues,
  resolveSpargeShape,
  spargeBlockCount,
  type ResolvedSpargeShape,
  type SpargeShape,
  type SpargeValues,
} from './spargeShape.ts';

/** PV-skip vote granularity: `none` (never skip), `warp` (each group of `warpRows` query rows votes alone), `block` (all rows of the query block vote together). */
export const SPARGE_PV_MODES = ['none', 'warp', 'block'] as const;
export type SpargePvMode = (typeof SPARGE_PV_MODES)[number];

/**
 * Block-sparse attention arguments: decoded Q [b][h][sq][d], K and V [b][hk][sk][d] (packed bhsd),
 * which key blocks each query block visits (a one-hot map or upstream's LUT, grid
 * [b][h][⌈sq/blockQ⌉][⌈sk/blockK⌉]), top-left causal masking inside the visited blocks, the softmax
 * scale (default 1/√d).
 */
export interface SpargeAttentionArgs {
  readonly shape: SpargeShape;
  readonly q: SpargeValues;
  readonly k: SpargeValues;
  readonly v: SpargeValues;
  readonly blockQ: number;
  readonly blockK: number;
  readonly blocks: SpargeBlockMap | SpargeLut;
  readonly isCausal?: boolean;
  readonly scale?: number;
}

/** O [b][h][sq][d] and LSE [b][h][sq] (natural log; −∞ for a row that sees no key, whose O is 0). */
export interface SpargeAttentionResult {
  readonly o: Float64Array;
  readonly lse: Float64Array;
}

interface Resolved {
  readonly shape: ResolvedSpargeShape;
  readonly map: SpargeBlockMap;
  readonly qBlocks: number;
  readonly kBlocks: number;
  readonly scale: number;
  readonly isCausal: boolean;
}

function resolve(args: SpargeAttentionArgs): Resolved {
  const shape = resolveSpargeShape(args.shape, { anyHeadDim: true });
  const { batch, nhead, nheadK, seqlenQ, seqlenK, headDim } = shape;
  checkSpargeValues('q', args.q, batch, nhead, seqlenQ, headDim);
  checkSpargeValues('k', args.k, batch, nheadK, seqlenK, headDim);
  checkSpargeValues('v', args.v, batch, nheadK, seqlenK, headDim);
  for (const key of ['blockQ', 'blockK'] as const) {
    if (!Number.isSafeInteger(args[key]) || args[key] < 1) throw new SpargeArgumentError(key, 'must be an integer ≥ 1', args[key]);
  }
  const qBlocks = spargeBlockCount(seqlenQ, args.blockQ);
  const kBlocks = spargeBlockCount(seqlenK, args.blockK);
  const blocks = args.blocks;
  if (typeof blocks !== 'object' || blocks === null) throw new SpargeArgumentError('blocks', 'must be a block map or a LUT', blocks);
  const grid = { batch, nhead, qBlocks, kBlocks };
  for (const key of ['batch', 'nhead', 'qBlocks', 'kBlocks'] as const) {
    if (blocks[key] !== grid[key])
      throw new SpargeArgumentError(`blocks.${key}`, `must be ${grid[key]} (from the shape and block sizes)`, blocks[key]);
  }
  const map = 'map' in blocks ? blocks : decodeSpargeLut(blocks);
  if (!(map.map instanceof Uint8Array) || map.map.length !== batch * nhead * qBlocks * kBlocks)
    throw new SpargeArgumentError('blocks.map', `must be a Uint8Array of ${batch * nhead * qBlocks * kBlocks} entries`, map.map?.length);
  const scale = args.scale ?? 1 / Math.sqrt(headDim);
  if (typeof scale !== 'number' || !Number.isFinite(scale) || scale <= 0)
    throw new SpargeArgumentError('scale', 'must be a finite number > 0', scale);
  const isCausal = args.isCausal ?? false;
  if (typeof isCausal !== 'boolean') throw new SpargeArgumentError('isCausal', 'must be a boolean', isCausal);
  return { shape, map, qBlocks, kBlocks, scale, isCausal };
}

/** The keys of key block j that query row `row` keeps: [first, end) clipped to the sequence and, when causal, to key ≤ row (top-left). */
function keyRange(j: number, row: number, blockK: number, seqlenK: number, isCausal: boolean): [number, number] {
  const first = j * blockK;
  let end = Math.min(seqlenK, first + blockK);
  if (isCausal) end = Math.min(end, row + 1);
  return [first, Math.max(first, end)];
}

/**
 * Dense attention restricted to a block mask, in float64: query row r of block i attends exactly the
 * keys of the key blocks M[b, h, i, ·] selects (and, when causal, key ≤ r: diagonal blocks are
 * element-masked, fixing upstream's Sage2 path, which leaks future tokens there): O = Σ e·v / Σ e,
 * e = exp(scale·q·k − max). A row that keeps no key (no block selected, or only blocks above the
 * diagonal) gets **O = 0 and LSE = −∞**: our choice; upstream's kernel returns without writing O (the
 * tensor is `empty_like`, so garbage).
 * Postconditions (tested): with every block on it equals @tilekit/fmha's `referenceAttentionFwd`
 * (causal: the top-left mask); it equals `spargePvSkipAttentionReference` with pvThreshold = +∞.
 * @throws SpargeArgumentError for a bad shape, values, grid or scale.
 */
export function spargeMaskedAttentionReference(args: SpargeAttentionArgs): SpargeAttentionResult {
  const { shape, map, qBlocks, kBlocks, scale, isCausal } = resolve(args);
  const { batch, nhead, nheadK, seqlenQ, seqlenK, headDim: d } = shape;
  const { q, k, v, blockQ, blockK } = args;
  const o = new Float64Array(batch * nhead * seqlenQ * d);
  const lse = new Float64Array(batch * nhead * seqlenQ).fill(-Infinity);
  const logits = new Float64Array(seqlenK);
  const keys = new Int32Array(seqlenK);
  for (let b = 0; b < batch; b++) {
    for (let h = 0; h < nhead; h++) {
      const kvBase = (b * nheadK + Math.floor(h / (nhead / nheadK))) * seqlenK * d;
      for (let i = 0; i < qBlocks; i++) {
        const mapRow = ((b * nhead + h) * qBlocks + i) * kBlocks;
        for (let r = i * blockQ; r < Math.min(seqlenQ, (i + 1) * blockQ); r++) {
          const qOff = ((b * nhead + h) * seqlenQ + r) * d;
          let n = 0;
          let max = -Infinity;
          for (let j = 0; j < kBlocks; j++) {
            if (map.map[mapRow + j] !== 1) continue;
            const [first, end] = keyRange(j, r, blockK, seqlenK, isCausal);
            for (let key = first; key < end; key++) {
              let dot = 0;
              const kOff = kvBase + key * d;
              for (let c = 0; c < d; c++) dot += q[qOff + c]! * k[kOff + c]!;
              const s = dot * scale;
              logits[n] = s;
              keys[n++] = key;
              if (s > max) max = s;
            }
          }
          if (n === 0) continue; // O stays 0, LSE −∞
          let sum = 0;
          for (let t = 0; t < n; t++) {
            const e = Math.exp(logits[t]! - max);
            sum += e;
            const vOff = kvBase + keys[t]! * d;
            for (let c = 0; c < d; c++) o[qOff + c]! += e * v[vOff + c]!;
          }
          for (let c = 0; c < d; c++) o[qOff + c]! /= sum;
          lse[(b * nhead + h) * seqlenQ + r] = max + Math.log(sum);
        }
      }
    }
  }
  return { o, lse };
}

/** PV-skip options of `spargePvSkipAttentionReference`. */
export interface SpargePvSkipArgs extends SpargeAttentionArgs {
  readonly pvMode: SpargePvMode;
  /** Log2 units of scaled logits, ≥ 0; +∞ never skips. A number or one per query head. */
  readonly pvThreshold: SpargePerHead;
  /** Rows per vote group in `warp` mode (default 16: one warp's rows of an m16 MMA / wgmma tile). */
  readonly warpRows?: number;
  /** The last visited blocks that are always computed (default 1: upstream sm90; sm80/89 use 2). */
  readonly alwaysComputedTail?: number;
  /** Paper Algorithm 1 adds a skipped tile's row sums to l; upstream's code does not (default false, upstream). */
  readonly skippedMassInDenominator?: boolean;
}

/** The result with the count of (visited block, vote group) pairs whose P·V was computed and skipped, and of skipped (visited block, query row) pairs. */
export interface SpargePvSkipResult extends SpargeAttentionResult {
  readonly pvComputed: number;
  readonly pvSkipped: number;
  readonly pvSkippedRows: number;
}

const LOG2E = Math.LOG2E;

/**
 * The attention stage with upstream's PV skip (`update_mo` of thu-ml/SpargeAttn) as a CPU model in
 * float64: per query block, the visited key blocks in ascending order, online softmax in base 2 (t = scale·log2e·q·k,
 * masked keys −∞). For each visited block and row: m_loc = max_c t, Δ = m_loc − m_prev (−∞ for a row
 * without keys in this block), m_new = max(m_prev, m_loc), O and l rescaled by 2^(m_prev − m_new)
 * (always). Then each vote group computes iff max_{rows} Δ + pvThreshold[h] > 0 (pvThreshold = +∞
 * always computes): P = 2^(t − m_new), l += rowsum P, O += P·V; otherwise P·V is skipped and l is not
 * updated (upstream) or gets rowsum P (`skippedMassInDenominator`, the paper). The last
 * `alwaysComputedTail` visited blocks always compute. Groups: `none` no vote; `warp` `warpRows`
 * consecutive rows (the paper's Algorithm 1 and upstream's kPerWarp); `block` every row of the query
 * block (upstream's kPerBlock, what all shipped bindings instantiate). Rows past seqlenQ do not vote
 * (a GPU port must keep padded rows out of the vote: their zero logits would always vote "compute").
 * A row without keys gives O = 0, LSE = −∞.
 * Postconditions (property-tested): pvThreshold = +∞ or mode `none` equals
 * `spargeMaskedAttentionReference`; m does not depend on skipping, so a `block` vote is the max of its
 * `warp` votes and `warp` skips every (row, tile) that `block` skips; every skipped tile's
 * weights are ≤ 2^−pvThreshold of the row max, bounding |ΔO|.
 * @throws SpargeArgumentError for bad arguments.
 */
export function spargePvSkipAttentionReference(args: SpargePvSkipArgs): SpargePvSkipResult {
  const { shape, map, qBlocks, kBlocks, scale, isCausal } = resolve(args);
  const { batch, nhead, nheadK, seqlenQ, seqlenK, headDim: d } = shape;
  const { q, k, v, blockQ, blockK, pvMode } = args;
  if (!(SPARGE_PV_MODES as readonly string[]).includes(pvMode))
    throw new SpargeArgumentError('pvMode', `must be one of ${SPARGE_PV_MODES.join(', ')}`, pvMode);
  const warpRows = args.warpRows ?? 16;
  if (!Number.isSafeInteger(warpRows) || warpRows < 1) throw new SpargeArgumentError('warpRows', 'must be an integer ≥ 1', warpRows);
  const tail = args.alwaysComputedTail ?? 1;
  if (!Number.isSafeInteger(tail) || tail < 0) throw new SpargeArgumentError('alwaysComputedTail', 'must be an integer ≥ 0', tail);
  const inDenominator = args.skippedMassInDenominator ?? false;
  const thresholds =
    typeof args.pvThreshold === 'number' ? Array<number>(nhead).fill(args.pvThreshold) : Array.from(args.pvThreshold as ArrayLike<number>);
  if (thresholds.length !== nhead)
    throw new SpargeArgumentError('pvThreshold', `as a per-head array must have nhead = ${nhead} entries`, thresholds.length);
  thresholds.forEach((t, h) => {
    if (typeof t !== 'number' || !(t >= 0))
      throw new SpargeArgumentError(
        typeof args.pvThreshold === 'number' ? 'pvThreshold' : `pvThreshold[${h}]`,
        'must be ≥ 0 (+Infinity disables skipping)',
        t,
      );
  });
  const o = new Float64Array(batch * nhead * seqlenQ * d);
  const lse = new Float64Array(batch * nhead * seqlenQ).fill(-Infinity);
  const t2 = new Float64Array(blockQ * blockK);
  const m = new Float64Array(blockQ);
  const l = new Float64Array(blockQ);
  const delta = new Float64Array(blockQ);
  const acc = new Float64Array(blockQ * d);
  let pvComputed = 0;
  let pvSkipped = 0;
  let pvSkippedRows = 0;
  const groupSize = pvMode === 'block' ? blockQ : pvMode === 'warp' ? warpRows : 1;
  for (let b = 0; b < batch; b++) {
    for (let h = 0; h < nhead; h++) {
      const kvBase = (b * nheadK + Math.floor(h / (nhead / nheadK))) * seqlenK * d;
      const pv = thresholds[h]!;
      for (let i = 0; i < qBlocks; i++) {
        const mapRow = ((b * nhead + h) * qBlocks + i) * kBlocks;
        const row0 = i * blockQ;
        const rows = Math.min(blockQ, seqlenQ - row0);
        const visited: number[] = [];
        for (let j = 0; j < kBlocks; j++) if (map.map[mapRow + j] === 1) visited.push(j);
        m.fill(-Infinity);
        l.fill(0);
        acc.fill(0);
        visited.forEach((j, position) => {
          const first = j * blockK;
          const cols = Math.min(blockK, seqlenK - first);
          for (let r = 0; r < rows; r++) {
            const qOff = ((b * nhead + h) * seqlenQ + row0 + r) * d;
            const [, end] = keyRange(j, row0 + r, blockK, seqlenK, isCausal);
            let mLoc = -Infinity;
            for (let c = 0; c < cols; c++) {
              let value = -Infinity;
              if (first + c < end) {
                let dot = 0;
                const kOff = kvBase + (first + c) * d;
                for (let e = 0; e < d; e++) dot += q[qOff + e]! * k[kOff + e]!;
                value = dot * scale * LOG2E;
              }
              t2[r * blockK + c] = value;
              if (value > mLoc) mLoc = value;
            }
            delta[r] = mLoc === -Infinity ? -Infinity : mLoc - m[r]!;
            const mNew = Math.max(m[r]!, mLoc);
            if (mNew !== -Infinity && m[r]! !== mNew) {
              const factor = 2 ** (m[r]! - mNew);
              l[r]! *= factor;
              for (let e = 0; e < d; e++) acc[r * d + e]! *= factor;
            }
            m[r] = mNew;
          }
          const eligible = pvMode !== 'none' && position < visited.length - tail;
          for (let g0 = 0; g0 < rows; g0 += groupSize) {
            const g1 = Math.min(rows, g0 + groupSize);
            let vote = -Infinity;
            for (let r = g0; r < g1; r++) vote = Math.max(vote, delta[r]!);
            const compute = !eligible || pv === Infinity || vote + pv > 0;
            if (compute) pvComputed++;
            else {
              pvSkipped++;
              pvSkippedRows += g1 - g0;
            }
            for (let r = g0; r < g1; r++) {
              if (m[r] === -Infinity) continue;
              for (let c = 0; c < cols; c++) {
                const p = 2 ** (t2[r * blockK + c]! - m[r]!);
                if (p === 0) continue;
                if (compute || inDenominator) l[r]! += p;
                if (!compute) continue;
                const vOff = kvBase + (first + c) * d;
                for (let e = 0; e < d; e++) acc[r * d + e]! += p * v[vOff + e]!;
              }
            }
          }
        });
        for (let r = 0; r < rows; r++) {
          if (!(l[r]! > 0)) continue;
          const oOff = ((b * nhead + h) * seqlenQ + row0 + r) * d;
          for (let e = 0; e < d; e++) o[oOff + e] = acc[r * d + e]! / l[r]!;
          lse[(b * nhead + h) * seqlenQ + row0 + r] = (m[r]! + Math.log2(l[r]!)) * Math.LN2;
        }
      }
    }
  }
  return { o, lse, pvComputed, pvSkipped, pvSkippedRows };
}
