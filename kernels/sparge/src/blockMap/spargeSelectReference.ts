// The selection stage alone on the CPU (float64), from pooled inputs laid out as the GPU stage
// reads them: the truth the selection kernel's GPU spec compares against, in batch and group mode.
// Row by row it is spargeBlockMapReference's steps 3–5 (same spargeSelectRow, same finalisation).
import { spargeSelectRow } from '../spargeBlockMapReference.ts';
import type { SpargeSelection } from '../spargeHyperparameters.ts';
import { encodeSpargeLut, type SpargeLut } from '../spargeLut.ts';
import { spargeBlockCount, spargeCausalBlockAllowed } from '../spargeShape.ts';
import { SpargeArgumentError } from '../spargeArgumentError.ts';

/**
 * The problem of the selection stage: `batch` sequences, `nhead` query heads reading K head
 * ⌊h/(nhead/nheadK)⌋, blocks of blockQ/blockK rows. Batch mode: every sequence has seqlenQ/seqlenK
 * rows. Group mode (varlen): sequence b has seqstartQ[b+1] − seqstartQ[b] query rows (likewise K).
 * The block grid is padded to qBlocksMax = ⌈max sq_b/blockQ⌉, kBlocksMax = ⌈max sk_b/blockK⌉.
 */
export interface SpargeSelectProblem {
  readonly batch: number;
  readonly nhead: number;
  readonly nheadK: number;
  readonly headDim: number;
  readonly blockQ: number;
  readonly blockK: number;
  readonly seqlenQ?: number;
  readonly seqlenK?: number;
  readonly seqstartQ?: readonly number[];
  readonly seqstartK?: readonly number[];
  readonly selection: SpargeSelection;
  /** Per head: the topk ratio or the cdf threshold τ. */
  readonly selectionValue: readonly number[];
  readonly simthreshd1: readonly number[];
  readonly isCausal: boolean;
  readonly attentionSink: boolean;
}

/** The pooled inputs (layouts of the block-map stage A outputs, padded grids). */
export interface SpargeSelectInputs {
  /** [b][h][qBlocksMax][d] */
  readonly pooledQ: ArrayLike<number>;
  /** [b][h][qBlocksMax] */
  readonly simQ: ArrayLike<number>;
  /** [b][hk][kBlocksMax][d] */
  readonly pooledK: ArrayLike<number>;
  /** [b][hk][kBlocksMax] */
  readonly simK: ArrayLike<number>;
}

/** The per-sequence block counts and the padded grid of a selection problem. */
export interface SpargeSelectGrid {
  readonly qBlocks: readonly number[];
  readonly kBlocks: readonly number[];
  readonly seqlensQ: readonly number[];
  readonly qBlocksMax: number;
  readonly kBlocksMax: number;
}

/** Query/key rows of each sequence (batch mode: the common lengths; group mode: the seqstart differences). */
export function spargeSelectSeqlens(p: Pick<SpargeSelectProblem, 'batch' | 'seqlenQ' | 'seqlenK' | 'seqstartQ' | 'seqstartK'>): {
  readonly q: number[];
  readonly k: number[];
} {
  const group = p.seqstartQ !== undefined;
  const lens = (starts: readonly number[] | undefined, len: number | undefined, name: string): number[] =>
    Array.from({ length: p.batch }, (_, b) => {
      const v = group ? starts![b + 1]! - starts![b]! : len!;
      if (!Number.isSafeInteger(v) || v < 0) throw new SpargeArgumentError(name, 'must give non-negative integer sequence lengths', v);
      return v;
    });
  return {
    q: lens(p.seqstartQ, p.seqlenQ, group ? 'seqstartQ' : 'seqlenQ'),
    k: lens(p.seqstartK, p.seqlenK, group ? 'seqstartK' : 'seqlenK'),
  };
}

/** The block counts of every sequence and the padded grid. */
export function spargeSelectGrid(p: SpargeSelectProblem): SpargeSelectGrid {
  const lens = spargeSelectSeqlens(p);
  const qBlocks = lens.q.map((s) => spargeBlockCount(s, p.blockQ));
  const kBlocks = lens.k.map((s) => spargeBlockCount(s, p.blockK));
  return { qBlocks, kBlocks, seqlensQ: lens.q, qBlocksMax: Math.max(1, ...qBlocks), kBlocksMax: Math.max(1, ...kBlocks) };
}

/** What the CPU selection gives: the map/LUT over the padded grid, per-row margins and per-(b, h) visited counts. */
export interface SpargeSelectReferenceResult {
  readonly grid: SpargeSelectGrid;
  /** [b][h][qBlocksMax][kBlocksMax], 0 past each sequence's blocks. */
  readonly map: Uint8Array;
  readonly lut: SpargeLut;
  /** [b][h][qBlocksMax]: see SpargeBlockMapResult.scoreMargin / massMargin (+∞ for padded rows). */
  readonly scoreMargin: Float64Array;
  readonly massMargin: Float64Array;
  /** [b][h][qBlocksMax]: max |Ŝ| over the row's candidates (0 without any): the scale of its fp32 rounding. */
  readonly scoreScale: Float64Array;
  /** [b][h]: Σ validBlockNum over the rows. */
  readonly visited: Int32Array;
}

/**
 * The selection stage on the CPU in float64 from pooled inputs: per (b, h, query block i < qBlocks_b),
 * Ŝ[j] = q̄ᵢ·k̄ⱼ/√d for j < kBlocks_b, −∞ where simK ≤ simthreshd1[h] (fix K block) or, when causal,
 * where spargeCausalBlockAllowed(i, j, blockQ, blockK, sq_b) fails; spargeSelectRow picks; then
 * M = fix K ∨ fix Q row (simQ ≤ θ) ∨ selected, M ∧= allowed when causal, M[0] = 1 with the sink.
 * Rows and columns past a sequence's blocks stay 0. Postcondition (tested): in batch mode, fed the
 * pooled intermediates of spargeBlockMapReference, the map, LUT and margins are that reference's.
 */
export function spargeSelectReference(p: SpargeSelectProblem, x: SpargeSelectInputs): SpargeSelectReferenceResult {
  const grid = spargeSelectGrid(p);
  const { qBlocksMax: QM, kBlocksMax: KM } = grid;
  const d = p.headDim;
  const rows = p.batch * p.nhead * QM;
  const map = new Uint8Array(rows * KM);
  const scoreMargin = new Float64Array(rows).fill(Infinity);
  const massMargin = new Float64Array(rows).fill(Infinity);
  const scoreScale = new Float64Array(rows);
  const visited = new Int32Array(p.batch * p.nhead);
  const invSqrtD = 1 / Math.sqrt(d);
  const ratio = p.nhead / p.nheadK;
  for (let b = 0; b < p.batch; b++) {
    const qb = grid.qBlocks[b]!;
    const kb = grid.kBlocks[b]!;
    const sq = grid.seqlensQ[b]!;
    const scores = new Float64Array(kb);
    for (let h = 0; h < p.nhead; h++) {
      const bhk = b * p.nheadK + Math.floor(h / ratio);
      const theta = p.simthreshd1[h]!;
      const fixK = (j: number): boolean => !(x.simK[bhk * KM + j]! > theta);
      const allowed = (i: number, j: number): boolean => !p.isCausal || spargeCausalBlockAllowed(i, j, p.blockQ, p.blockK, sq);
      for (let i = 0; i < qb; i++) {
        const row = (b * p.nhead + h) * QM + i;
        for (let j = 0; j < kb; j++) {
          if (fixK(j) || !allowed(i, j)) {
            scores[j] = -Infinity;
            continue;
          }
          let dot = 0;
          for (let c = 0; c < d; c++) dot += x.pooledQ[row * d + c]! * x.pooledK[(bhk * KM + j) * d + c]!;
          scores[j] = dot * invSqrtD;
          scoreScale[row] = Math.max(scoreScale[row]!, Math.abs(scores[j]!));
        }
        const pick = spargeSelectRow(scores, p.selection, p.selectionValue[h]!);
        scoreMargin[row] = pick.scoreMargin;
        massMargin[row] = pick.massMargin;
        const fixRow = !(x.simQ[row]! > theta);
        const out = row * KM;
        for (let j = 0; j < kb; j++) if (fixRow || fixK(j)) map[out + j] = 1;
        for (const j of pick.selected) map[out + j] = 1;
        for (let j = 0; j < kb; j++) if (!allowed(i, j)) map[out + j] = 0;
        if (p.attentionSink && kb > 0) map[out] = 1;
        for (let j = 0; j < kb; j++) visited[b * p.nhead + h]! += map[out + j]!;
      }
    }
  }
  const lut = encodeSpargeLut({ batch: p.batch, nhead: p.nhead, qBlocks: QM, kBlocks: KM, map });
  return { grid, map, lut, scoreMargin, massMargin, scoreScale, visited };
}
