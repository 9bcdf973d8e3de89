import {
  checkSpargeParams,
  spargeTopkCount,
  type ResolvedSpargeParams,
  type SpargeParams,
  type SpargeSelection,
  type SpargeTailBlockRule,
} from './spargeHyperparameters.ts';
import { encodeSpargeLut, type SpargeBlockMap, type SpargeLut } from './spargeLut.ts';
import {
  checkSpargeValues,
  resolveSpargeShape,
  spargeBlockCount,
  spargeCausalBlockAllowed,
  type ResolvedSpargeShape,
  type SpargeShape,
  type SpargeValues,
} from './spargeShape.ts';

/** Inputs of the block-map prediction: decoded Q [b][h][sq][d] and K [b][hk][sk][d] (packed bhsd). */
export interface SpargeBlockMapArgs {
  readonly shape: SpargeShape;
  readonly q: SpargeValues;
  readonly k: SpargeValues;
  readonly params: SpargeParams;
}

/** Pooled tokens and self-similarities of the blocks of one (batch, head) sequence. */
export interface SpargePooledBlocks {
  /** [blocks][headDim]: the mean of each block's real rows (after subtracting `mean` when given). */
  readonly pooled: Float64Array;
  /** [blocks]: ‖Σ x̂‖² / rows², x̂ = x/‖x‖ (0 for a zero row); NaN for a partial block under `upstreamFix`. */
  readonly similarity: Float64Array;
}

/** Everything the prediction stage computes (float64), for the attention stage and for checking a GPU port stage by stage. */
export interface SpargeBlockMapResult {
  readonly shape: ResolvedSpargeShape;
  readonly params: ResolvedSpargeParams;
  readonly blockMap: SpargeBlockMap;
  readonly lut: SpargeLut;
  /** 1 − visited blocks / blocks dense attention visits (nQ·nK per (b, h), or the causally allowed blocks when causal). */
  readonly achievedSparsity: number;
  /** [b][hk][headDim]: the K mean subtracted before pooling (zeros without smoothing). */
  readonly keyMean: Float64Array;
  /** [b][h][qBlocks][headDim] and [b][hk][kBlocks][headDim]: pooled Q and pooled (smoothed) K. */
  readonly pooledQ: Float64Array;
  readonly pooledK: Float64Array;
  /** [b][h][qBlocks] and [b][hk][kBlocks]: block self-similarities. */
  readonly similarityQ: Float64Array;
  readonly similarityK: Float64Array;
  /**
   * [b][h][qBlocks]: how far the row's selection is from changing: the pooled-score gap between the
   * last selected and the first unselected candidate (scoreMargin) and, in cdf mode, the distance of
   * τ from the cumulative masses that would change the count (massMargin; +∞ in topk mode). A GPU
   * map may differ from this one only in rows whose margins are within its rounding error.
   */
  readonly scoreMargin: Float64Array;
  readonly massMargin: Float64Array;
}

/**
 * The per-(batch, head) mean over the sequence of K: mean[(b·nheadK + hk)·d + c] = (1/sk)·Σ_n k[b,hk,n,c]
 * (upstream's `km`, K smoothing).
 */
export function spargeKeyMean(k: SpargeValues, batch: number, nheadK: number, seqlenK: number, headDim: number): Float64Array {
  const mean = new Float64Array(batch * nheadK * headDim);
  for (let bh = 0; bh < batch * nheadK; bh++) {
    const base = bh * seqlenK * headDim;
    for (let n = 0; n < seqlenK; n++) for (let c = 0; c < headDim; c++) mean[bh * headDim + c]! += k[base + n * headDim + c]!;
    for (let c = 0; c < headDim; c++) mean[bh * headDim + c]! /= seqlenK;
  }
  return mean;
}

/**
 * Pools the blocks of one sequence (rows `offset` … `offset + seqlen·headDim` of `values`), blocks of
 * `blockSize` rows, the last one partial when seqlen % blockSize ≠ 0: per block, the mean over its
 * real rows of x − mean (mean = null: x), and the self-similarity ‖Σ x̂_i‖²/rows² with x̂_i the
 * L2-normalized row (a zero row normalizes to 0, never NaN). `upstreamFix` makes a partial block's
 * similarity NaN (upstream's zero-padded 0/0), so it compares false against every threshold.
 * Postcondition (property-tested): similarity = mean of the Gram matrix X̂X̂ᵀ, in [0, 1].
 */
export function spargePoolBlocks(
  values: SpargeValues,
  offset: number,
  seqlen: number,
  headDim: number,
  blockSize: number,
  mean: Float64Array | null,
  meanOffset = 0,
  tailBlockRule: SpargeTailBlockRule = 'pooled',
): SpargePooledBlocks {
  const blocks = spargeBlockCount(seqlen, blockSize);
  const pooled = new Float64Array(blocks * headDim);
  const similarity = new Float64Array(blocks);
  const row = new Float64Array(headDim);
  const unitSum = new Float64Array(headDim);
  for (let blk = 0; blk < blocks; blk++) {
    const first = blk * blockSize;
    const rows = Math.min(blockSize, seqlen - first);
    unitSum.fill(0);
    for (let r = 0; r < rows; r++) {
      const base = offset + (first + r) * headDim;
      let norm2 = 0;
      for (let c = 0; c < headDim; c++) {
        const x = values[base + c]! - (mean === null ? 0 : mean[meanOffset + c]!);
        row[c] = x;
        norm2 += x * x;
        pooled[blk * headDim + c]! += x;
      }
      const inv = norm2 > 0 ? 1 / Math.sqrt(norm2) : 0;
      for (let c = 0; c < headDim; c++) unitSum[c]! += row[c]! * inv;
    }
    let s2 = 0;
    for (let c = 0; c < headDim; c++) {
      pooled[blk * headDim + c]! /= rows;
      s2 += unitSum[c]! * unitSum[c]!;
    }
    similarity[blk] = tailBlockRule === 'upstreamFix' && rows < blockSize ? NaN : s2 / (rows * rows);
  }
  return { pooled, similarity };
}

/** The selection of one query block's row: the chosen key blocks (ascending) and the margins (see `SpargeBlockMapResult`). */
export interface SpargeRowSelection {
  readonly selected: readonly number[];
  readonly scoreMargin: number;
  readonly massMargin: number;
}

/**
 * Selection of one row of pooled scores (−∞ = not a candidate: a fix key block or causally masked).
 * Candidates are ordered by score descending, **ties broken by the lower block index first** (the
 * rule the GPU sort follows; upstream's torch.sort leaves tie order unspecified). P = softmax over the
 * candidates, c = cumulative P in that order.
 * - `topk`: n = ⌊topk·kBlocks⌋ (all key blocks, even when causal);
 * - `cdf`: n = #{t : c_t ≤ τ} (upstream's searchsorted right=True; the CK port's "smallest n with
 *   c ≥ τ" is one more);
 * then n = max(n, 1) (upstream promotes 0 to 1) and at most the number of candidates (upstream's
 * extra picks land on masked or fix blocks, which change nothing). A row without candidates selects
 * nothing (its key blocks are all fix or masked).
 */
export function spargeSelectRow(scores: Float64Array, selection: SpargeSelection, value: number): SpargeRowSelection {
  const order: number[] = [];
  for (let j = 0; j < scores.length; j++) if (scores[j]! !== -Infinity) order.push(j);
  if (order.length === 0) return { selected: [], scoreMargin: Infinity, massMargin: Infinity };
  order.sort((x, y) => scores[y]! - scores[x]! || x - y);
  let n: number;
  let massMargin = Infinity;
  if (selection === 'topk') n = spargeTopkCount(value, scores.length);
  else {
    const top = scores[order[0]!]!;
    let total = 0;
    for (const j of order) total += Math.exp(scores[j]! - top);
    let cumulative = 0;
    let count = 0;
    const cdf: number[] = [];
    for (const j of order) {
      cumulative += Math.exp(scores[j]! - top) / total;
      cdf.push(cumulative);
      if (cumulative <= value) count++;
    }
    // Moving τ across c[count − 1] or c[count] changes the count; it changes n only past the promotion to 1.
    if (count >= 2) massMargin = Math.min(massMargin, value - cdf[count - 1]!);
    if (count >= 1 && count < cdf.length) massMargin = Math.min(massMargin, cdf[count]! - value);
    n = Math.max(1, count);
  }
  n = Math.min(n, order.length);
  const scoreMargin = n < order.length ? scores[order[n - 1]!]! - scores[order[n]!]! : Infinity;
  return { selected: order.slice(0, n).sort((x, y) => x - y), scoreMargin, massMargin };
}

/**
 * Sparge's block-map prediction (stage 1) on the CPU in float64, as upstream computes it
 * (thu-ml/SpargeAttn `spas_sage_attn/utils.py`; SpargeAttn paper, arXiv 2502.18137, Algorithm 1), with
 * the upstream bugs fixed:
 * 1. K smoothing: km = mean over the sequence of K per (b, hk), subtracted before pooling (smoothK);
 * 2. per-block mean pooling over the real rows and self-similarity of Q blocks and (K − km) blocks;
 *    a block is self-similar iff similarity > simthreshd1[h] (strict), else it is a fix block;
 * 3. pooled scores Ŝ[i, j] = q̄_i·k̄_j / √d, −∞ for fix K blocks and, when causal, for key blocks no
 *    query of block i may see (top-left: `spargeCausalBlockAllowed`);
 * 4. selection per row by `spargeSelectRow` (topk or cdf, ties to the lower index, n ≥ 1);
 * 5. M = fix K columns ∨ fix Q rows (whole row) ∨ selected; causal: M ∧= allowed (so no block wholly
 *    above the diagonal is visited; diagonal blocks stay and the attention stage masks their elements);
 *    sink: M[:, 0] = 1.
 * Query head h reads K head ⌊h / (nhead / nheadK)⌋. Partial tail blocks pool over their real rows
 * (`tailBlockRule` `pooled`) or are fix blocks as upstream (`upstreamFix`).
 * Postconditions (tested): equals a literal transcription of upstream's computation; every row has
 * at least one block when the sink is on or a candidate exists; the LUT encodes the map.
 * @throws SpargeArgumentError for a bad shape, values or hyperparameters.
 */
export function spargeBlockMapReference(args: SpargeBlockMapArgs): SpargeBlockMapResult {
  const shape = resolveSpargeShape(args.shape);
  const { batch, nhead, nheadK, seqlenQ, seqlenK, headDim: d } = shape;
  const params = checkSpargeParams(args.params, { nhead, headDim: d });
  const q = checkSpargeValues('q', args.q, batch, nhead, seqlenQ, d);
  const k = checkSpargeValues('k', args.k, batch, nheadK, seqlenK, d);
  const { blockQ, blockK, isCausal } = params;
  const qBlocks = spargeBlockCount(seqlenQ, blockQ);
  const kBlocks = spargeBlockCount(seqlenK, blockK);
  const keyMean = params.smoothK ? spargeKeyMean(k, batch, nheadK, seqlenK, d) : new Float64Array(batch * nheadK * d);
  const pooledQ = new Float64Array(batch * nhead * qBlocks * d);
  const pooledK = new Float64Array(batch * nheadK * kBlocks * d);
  const similarityQ = new Float64Array(batch * nhead * qBlocks);
  const similarityK = new Float64Array(batch * nheadK * kBlocks);
  for (let bh = 0; bh < batch * nheadK; bh++) {
    const p = spargePoolBlocks(k, bh * seqlenK * d, seqlenK, d, blockK, params.smoothK ? keyMean : null, bh * d, params.tailBlockRule);
    pooledK.set(p.pooled, bh * kBlocks * d);
    similarityK.set(p.similarity, bh * kBlocks);
  }
  for (let bh = 0; bh < batch * nhead; bh++) {
    const p = spargePoolBlocks(q, bh * seqlenQ * d, seqlenQ, d, blockQ, null, 0, params.tailBlockRule);
    pooledQ.set(p.pooled, bh * qBlocks * d);
    similarityQ.set(p.similarity, bh * qBlocks);
  }
  const map = new Uint8Array(batch * nhead * qBlocks * kBlocks);
  const scoreMargin = new Float64Array(batch * nhead * qBlocks);
  const massMargin = new Float64Array(batch * nhead * qBlocks);
  const scores = new Float64Array(kBlocks);
  const invSqrtD = 1 / Math.sqrt(d);
  let visited = 0;
  let dense = 0;
  for (let b = 0; b < batch; b++) {
    for (let h = 0; h < nhead; h++) {
      const bhk = b * nheadK + Math.floor(h / (nhead / nheadK));
      const theta = params.simthreshd1[h]!;
      const fixK = (j: number): boolean => !(similarityK[bhk * kBlocks + j]! > theta);
      for (let i = 0; i < qBlocks; i++) {
        const row = (b * nhead + h) * qBlocks + i;
        const qOff = row * d;
        for (let j = 0; j < kBlocks; j++) {
          if (fixK(j) || (isCausal && !spargeCausalBlockAllowed(i, j, blockQ, blockK, seqlenQ))) {
            scores[j] = -Infinity;
            continue;
          }
          const kOff = (bhk * kBlocks + j) * d;
          let dot = 0;
          for (let c = 0; c < d; c++) dot += pooledQ[qOff + c]! * pooledK[kOff + c]!;
          scores[j] = dot * invSqrtD;
        }
        const pick = spargeSelectRow(scores, params.selection, params.selectionValue[h]!);
        scoreMargin[row] = pick.scoreMargin;
        massMargin[row] = pick.massMargin;
        const fixRow = !(similarityQ[row]! > theta);
        const out = row * kBlocks;
        for (let j = 0; j < kBlocks; j++) if (fixRow || fixK(j)) map[out + j] = 1;
        for (const j of pick.selected) map[out + j] = 1;
        for (let j = 0; j < kBlocks; j++) {
          const allowed = !isCausal || spargeCausalBlockAllowed(i, j, blockQ, blockK, seqlenQ);
          if (!allowed) map[out + j] = 0;
          else dense++;
        }
        if (params.attentionSink) map[out] = 1;
        for (let j = 0; j < kBlocks; j++) visited += map[out + j]!;
      }
    }
  }
  const blockMap: SpargeBlockMap = { batch, nhead, qBlocks, kBlocks, map };
  return {
    shape,
    params,
    blockMap,
    lut: encodeSpargeLut(blockMap),
    achievedSparsity: 1 - visited / dense,
    keyMean,
    pooledQ,
    pooledK,
    similarityQ,
    similarityK,
    scoreMargin,
    massMargin,
  };
}
