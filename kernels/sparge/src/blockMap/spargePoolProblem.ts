// The problem Sparge's block-map row kernels (K mean, pooling) run: Q and K shapes and element
// strides, batch or group (varlen) mode, block sizes and flags; its checks (SpargeArgumentError
// naming the argument) and the byte sizes of every output, so a caller can allocate them.
import { ArgumentProblems } from '@tilekit/numeric';
import { SpargeArgumentError } from '../spargeArgumentError.ts';
import type { SpargeTailBlockRule } from '../spargeHyperparameters.ts';
import { SPARGE_KEY_MEAN_STEP_ROWS } from './spargeKeyMeanPartial.ts';
import {
  SPARGE_POOL_BLOCK_ROWS,
  SPARGE_POOL_DTYPES,
  SPARGE_POOL_HEAD_DIMS,
  SPARGE_POOL_MAX_ROWS,
  SPARGE_POOL_VECTOR,
  type SpargePoolDType,
} from './spargePoolPolicy.ts';

/** Element strides of a Q or K tensor (the head dim is contiguous). */
export interface SpargePoolStrides {
  readonly row: number;
  readonly head: number;
  /** Unused in group mode (one batch holds every row). */
  readonly batch: number;
}

/** A block-map pooling problem. Exactly one of (seqlenQ, seqlenK) and (seqstartQ, seqstartK) is given. */
export interface SpargePoolProblem {
  readonly dtype: SpargePoolDType;
  readonly headDim: number;
  /** Sequences (group mode: seqstart.length − 1). */
  readonly batch: number;
  readonly nhead: number;
  /** Default nhead; must divide it. */
  readonly nheadK?: number;
  readonly blockQ: number;
  readonly blockK: number;
  readonly seqlenQ?: number;
  readonly seqlenK?: number;
  /** Group mode: batch + 1 ascending row offsets from 0 (sequence b = rows [seqstart[b], seqstart[b + 1])). */
  readonly seqstartQ?: readonly number[];
  readonly seqstartK?: readonly number[];
  /** Default: packed bhsd. */
  readonly qStrides?: SpargePoolStrides;
  readonly kStrides?: SpargePoolStrides;
  /** Subtract the K mean (default true). */
  readonly smoothK?: boolean;
  /** Write int8 Q/K and per-block scales (default false). */
  readonly int8?: boolean;
  /** Default `pooled`. */
  readonly tailBlockRule?: SpargeTailBlockRule;
}

/** The checked problem with everything the launches need. */
export interface CheckedSpargePoolProblem {
  readonly dtype: SpargePoolDType;
  readonly headDim: number;
  readonly batch: number;
  readonly nhead: number;
  readonly nheadK: number;
  readonly blockQ: number;
  readonly blockK: number;
  readonly mode: 'batch' | 'group';
  /** Batch mode: rows per sequence; group mode: 0 (the kernels read seqstart). */
  readonly seqlenQ: number;
  readonly seqlenK: number;
  readonly seqstartQ: readonly number[] | null;
  readonly seqstartK: readonly number[] | null;
  /** Rows of one batch of the tensors: batch mode seqlen, group mode all rows. */
  readonly rowsQ: number;
  readonly rowsK: number;
  /** Batches of the tensors: batch, or 1 in group mode. */
  readonly batches: number;
  readonly maxSeqlenQ: number;
  readonly maxSeqlenK: number;
  /** Pooled blocks per (b, h): ⌈maxSeqlen / block⌉. */
  readonly qBlocksMax: number;
  readonly kBlocksMax: number;
  /** K-mean chunking: rows per chunk (a multiple of 64) and chunks per (b, hk). */
  readonly kmChunkRows: number;
  readonly kmChunksMax: number;
  readonly qStrides: SpargePoolStrides;
  readonly kStrides: SpargePoolStrides;
  readonly smoothK: boolean;
  readonly int8: boolean;
  readonly tailBlockRule: SpargeTailBlockRule;
}

/** Byte sizes of the outputs (and the K-mean workspace); the int8 ones are 0 without int8. */
export interface SpargePoolOutputBytes {
  /** fp32 [b][h][max(1, qBlocksMax)][d] and [b][h][max(1, qBlocksMax)] (`spargePooledBytes`). */
  readonly pooledQ: number;
  readonly simQ: number;
  /** fp32 [b][hk][max(1, kBlocksMax)][d] and [b][hk][max(1, kBlocksMax)]. */
  readonly pooledK: number;
  readonly simK: number;
  /** fp32 [b][hk][d]. */
  readonly km: number;
  /** fp32 [b][hk][kmChunksMax][d]: the K-mean partial sums (workspace). */
  readonly kmPartial: number;
  /** int8 [batches][h][rowsQ][d] and [batches][hk][rowsK][d] (packed bhsd). */
  readonly q8: number;
  readonly k8: number;
  /** fp32 [b][h][max(1, qBlocksMax)] and [b][hk][max(1, kBlocksMax)]. */
  readonly qScale: number;
  readonly kScale: number;
}

/** Most chunks per (b, hk) of the K-mean pass (bounds the finalize pass's sequential sums). */
export const SPARGE_KEY_MEAN_MAX_CHUNKS = 64;
/** Fewest rows per K-mean chunk (enough work per block to hide its reduction). */
export const SPARGE_KEY_MEAN_MIN_CHUNK_ROWS = 256;

/** Packed element strides of a [batch][heads][rows][d] (bhsd) or [batch][rows][heads][d] (bshd) tensor. */
export function spargePackedStrides(layout: 'bhsd' | 'bshd', heads: number, rows: number, headDim: number): SpargePoolStrides {
  return layout === 'bhsd'
    ? { row: headDim, head: rows * headDim, batch: heads * rows * headDim }
    : { row: heads * headDim, head: headDim, batch: rows * heads * headDim };
}

/** Rows per K-mean chunk for the longest sequence: ≥ 256, a multiple of 64, at most 64 chunks. */
export function spargeKeyMeanChunkRows(maxSeqlenK: number): number {
  const rows = Math.max(SPARGE_KEY_MEAN_MIN_CHUNK_ROWS, Math.ceil(maxSeqlenK / SPARGE_KEY_MEAN_MAX_CHUNKS));
  return Math.ceil(rows / SPARGE_KEY_MEAN_STEP_ROWS) * SPARGE_KEY_MEAN_STEP_ROWS;
}

function int(name: string, v: unknown, min: number, max = SPARGE_POOL_MAX_ROWS): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min || v > max)
    throw new SpargeArgumentError(name, `must be an integer in [${min}, ${max}]`, v);
  return v;
}

function member<T>(name: string, v: unknown, allowed: readonly T[]): T {
  if (!(allowed as readonly unknown[]).includes(v)) throw new SpargeArgumentError(name, `must be one of ${allowed.join(', ')}`, v);
  return v as T;
}

function flag(name: string, v: unknown, fallback: boolean): boolean {
  if (v === undefined) return fallback;
  if (typeof v !== 'boolean') throw new SpargeArgumentError(name, 'must be a boolean', v);
  return v;
}

/** batch + 1 ascending offsets from 0 (any count when `batch` is undefined: the caller found it invalid); every broken entry reported. */
function seqstarts(name: string, v: unknown, batch: number | undefined): readonly number[] {
  if (!Array.isArray(v)) throw new SpargeArgumentError(name, 'must be an array of batch + 1 integers', v);
  if (batch !== undefined && v.length !== batch + 1)
    throw new SpargeArgumentError(name, `must have batch + 1 = ${batch + 1} entries`, v.length);
  const problems = new ArgumentProblems(SpargeArgumentError);
  v.forEach((s, i) => {
    if (typeof s !== 'number' || !Number.isSafeInteger(s) || s < 0 || s > SPARGE_POOL_MAX_ROWS)
      return problems.report(`${name}[${i}]`, `must be an integer in [0, ${SPARGE_POOL_MAX_ROWS}]`, s);
    if (i === 0 && s !== 0) problems.report(`${name}[0]`, 'must be 0', s);
    const before = v[i - 1] as unknown;
    if (i > 0 && typeof before === 'number' && s < before) problems.report(`${name}[${i}]`, `must be ≥ ${name}[${i - 1}] = ${before}`, s);
  });
  problems.throwIfAny();
  return Object.freeze([...(v as number[])]);
}

/** Element strides: each an integer ≥ 0 and a multiple of 8 (batch unused in group mode), row in [headDim, 2^30] once headDim is valid. */
function strides(name: string, s: SpargePoolStrides | undefined, group: boolean, headDim: number | undefined): SpargePoolStrides {
  if (typeof s !== 'object' || s === null) throw new SpargeArgumentError(name, 'must be an object { row, head, batch }', s);
  const problems = new ArgumentProblems(SpargeArgumentError);
  for (const what of ['row', 'head', 'batch'] as const) {
    if (what === 'batch' && group) continue;
    const x = s[what];
    if (typeof x !== 'number' || !Number.isSafeInteger(x) || x < 0) problems.report(`${name}.${what}`, 'must be an integer ≥ 0', x);
    else if (x % SPARGE_POOL_VECTOR !== 0)
      problems.report(`${name}.${what}`, `must be a multiple of ${SPARGE_POOL_VECTOR} elements (the kernels read 16-byte vectors)`, x);
  }
  if (headDim !== undefined && typeof s.row === 'number' && (s.row < headDim || s.row > SPARGE_POOL_MAX_ROWS))
    problems.report(`${name}.row`, `must be in [headDim = ${headDim}, 2^30] (rows must not overlap)`, s.row);
  problems.throwIfAny();
  return Object.freeze({ row: s.row, head: s.head, batch: group ? 0 : s.batch });
}

/** The sequences of a problem: mode, seqlens (batch mode), starts (group mode), rows and longest sequences. */
interface PoolSequences {
  readonly group: boolean;
  readonly seqlenQ: number;
  readonly seqlenK: number;
  readonly startsQ: readonly number[] | null;
  readonly startsK: readonly number[] | null;
  readonly rowsQ: number;
  readonly rowsK: number;
  readonly maxQ: number;
  readonly maxK: number;
}

/** Batch mode (seqlenQ/seqlenK ≥ 1) or group mode (seqstartQ/seqstartK), every independent problem reported. */
function poolSequences(p: SpargePoolProblem, batch: number | undefined): PoolSequences {
  const problems = new ArgumentProblems(SpargeArgumentError);
  if (p.seqstartQ === undefined && p.seqstartK === undefined) {
    const seqlenQ = problems.check(() => int('problem.seqlenQ', p.seqlenQ, 1));
    const seqlenK = problems.check(() => int('problem.seqlenK', p.seqlenK, 1));
    problems.throwIfAny();
    return {
      group: false,
      seqlenQ: seqlenQ!,
      seqlenK: seqlenK!,
      startsQ: null,
      startsK: null,
      rowsQ: seqlenQ!,
      rowsK: seqlenK!,
      maxQ: seqlenQ!,
      maxK: seqlenK!,
    };
  }
  if (p.seqlenQ !== undefined || p.seqlenK !== undefined)
    problems.report('problem.seqlenQ', 'must be absent in group mode (seqstartQ/seqstartK give the lengths)', p.seqlenQ ?? p.seqlenK);
  const startsQ = problems.check(() => seqstarts('problem.seqstartQ', p.seqstartQ, batch));
  const startsK = problems.check(() => seqstarts('problem.seqstartK', p.seqstartK, batch));
  problems.throwIfAny();
  const longest = (s: readonly number[]) => Math.max(...s.slice(1).map((x, i) => x - s[i]!));
  return {
    group: true,
    seqlenQ: 0,
    seqlenK: 0,
    startsQ: startsQ!,
    startsK: startsK!,
    rowsQ: startsQ!.at(-1)!,
    rowsK: startsK!.at(-1)!,
    maxQ: longest(startsQ!),
    maxK: longest(startsK!),
  };
}

/** batch, nhead in [1, 65535]; nheadK (default nhead) in [1, 65535] dividing nhead. */
function poolHeads(
  v: ArgumentProblems,
  p: SpargePoolProblem,
): { batch: number | undefined; nhead: number | undefined; nheadK: number | undefined } {
  const batch = v.check(() => int('problem.batch', p.batch, 1, 65535));
  const nhead = v.check(() => int('problem.nhead', p.nhead, 1, 65535));
  const nheadK = p.nheadK === undefined ? nhead : v.check(() => int('problem.nheadK', p.nheadK, 1, 65535));
  if (nhead !== undefined && nheadK !== undefined && nhead % nheadK !== 0)
    v.report('problem.nheadK', `must divide nhead = ${nhead}`, nheadK);
  return { batch, nhead, nheadK };
}

/** Q and K strides (default packed bhsd, which needs the heads and rows). */
function poolStrides(
  v: ArgumentProblems,
  p: SpargePoolProblem,
  headDim: number | undefined,
  heads: { nhead: number | undefined; nheadK: number | undefined },
  seqs: PoolSequences | undefined,
) {
  const group = p.seqstartQ !== undefined || p.seqstartK !== undefined;
  const one = (name: string, given: SpargePoolStrides | undefined, h: number | undefined, rows: number | undefined) => {
    if (given !== undefined) return v.check(() => strides(name, given, group, headDim));
    return headDim === undefined || h === undefined || rows === undefined
      ? undefined
      : v.check(() => strides(name, spargePackedStrides('bhsd', h, rows, headDim), group, headDim));
  };
  return {
    qStrides: one('problem.qStrides', p.qStrides, heads.nhead, seqs?.rowsQ),
    kStrides: one('problem.kStrides', p.kStrides, heads.nheadK, seqs?.rowsK),
  };
}

/**
 * Checks a pooling problem: dtype fp16/bf16, headDim 64/128, blockQ/blockK 64/128, nheadK dividing
 * nhead, batch mode (seqlenQ/seqlenK ≥ 1) or group mode (seqstartQ/seqstartK: batch + 1 ascending
 * offsets from 0), strides multiples of 8 elements with row ≥ headDim, boolean flags, a known
 * tailBlockRule. A checked problem is returned as is. Postcondition: the block and chunk counts cover the longest sequence.
 * @throws SpargeArgumentError naming the argument (`problem.headDim`, `problem.seqstartK[3]`, `problem.qStrides.row`, …),
 * every problem found in one error (the first one's name as `argument`; rules comparing fields once they are valid).
 */
export function checkSpargePoolProblem(problem: SpargePoolProblem | CheckedSpargePoolProblem): CheckedSpargePoolProblem {
  if (typeof problem !== 'object' || problem === null) throw new SpargeArgumentError('problem', 'must be an object', problem);
  // Already checked (frozen, from this function): nothing to redo.
  if ('kmChunkRows' in problem && Object.isFrozen(problem)) return problem;
  const p = problem as SpargePoolProblem;
  const v = new ArgumentProblems(SpargeArgumentError);
  const dtype = v.check(() => member('problem.dtype', p.dtype, SPARGE_POOL_DTYPES));
  const headDim = v.check(() => member('problem.headDim', p.headDim, SPARGE_POOL_HEAD_DIMS));
  const blockQ = v.check(() => member('problem.blockQ', p.blockQ, SPARGE_POOL_BLOCK_ROWS));
  const blockK = v.check(() => member('problem.blockK', p.blockK, SPARGE_POOL_BLOCK_ROWS));
  const heads = poolHeads(v, p);
  const seqs = v.check(() => poolSequences(p, heads.batch));
  const { qStrides, kStrides } = poolStrides(v, p, headDim, heads, seqs);
  const smoothK = v.check(() => flag('problem.smoothK', p.smoothK, true));
  const int8 = v.check(() => flag('problem.int8', p.int8, false));
  const tailBlockRule = v.check(() => member('problem.tailBlockRule', p.tailBlockRule ?? 'pooled', ['pooled', 'upstreamFix'] as const));
  v.throwIfAny();
  const q = seqs!;
  const kmChunkRows = spargeKeyMeanChunkRows(q.maxK);
  return Object.freeze({
    dtype: dtype!,
    headDim: headDim!,
    batch: heads.batch!,
    nhead: heads.nhead!,
    nheadK: heads.nheadK!,
    blockQ: blockQ!,
    blockK: blockK!,
    mode: q.group ? 'group' : 'batch',
    seqlenQ: q.seqlenQ,
    seqlenK: q.seqlenK,
    seqstartQ: q.startsQ,
    seqstartK: q.startsK,
    rowsQ: q.rowsQ,
    rowsK: q.rowsK,
    batches: q.group ? 1 : heads.batch!,
    maxSeqlenQ: q.maxQ,
    maxSeqlenK: q.maxK,
    qBlocksMax: Math.ceil(q.maxQ / blockQ!),
    kBlocksMax: Math.ceil(q.maxK / blockK!),
    kmChunkRows,
    kmChunksMax: Math.max(1, Math.ceil(q.maxK / kmChunkRows)),
    qStrides: qStrides!,
    kStrides: kStrides!,
    smoothK: smoothK!,
    int8: int8!,
    tailBlockRule: tailBlockRule!,
  } satisfies CheckedSpargePoolProblem);
}

/**
 * Byte sizes of the pooled blocks and their self-similarity flags — fp32 [b][h][QM][d], [b][h][QM],
 * [b][hk][KM][d], [b][hk][KM] — over the padded block grid QM = max(1, qBlocksMax), KM = max(1,
 * kBlocksMax) that the selection kernel walks (it covers every (b, h) row even when every query or
 * every key sequence is empty). The one size of these buffers: the pooling stage's outputs
 * (`spargePoolOutputBytes`, what `SpargeBlockMapKernels.prepare` allocates) and the selection's
 * inputs (`spargeSelectBufferBytes`) both come from here.
 */
export function spargePooledBytes(shape: {
  readonly batch: number;
  readonly nhead: number;
  readonly nheadK: number;
  readonly headDim: number;
  readonly qBlocksMax: number;
  readonly kBlocksMax: number;
}): { readonly pooledQ: number; readonly simQ: number; readonly pooledK: number; readonly simK: number } {
  const rowsQ = shape.batch * shape.nhead * Math.max(1, shape.qBlocksMax);
  const rowsK = shape.batch * shape.nheadK * Math.max(1, shape.kBlocksMax);
  return { pooledQ: rowsQ * shape.headDim * 4, simQ: rowsQ * 4, pooledK: rowsK * shape.headDim * 4, simK: rowsK * 4 };
}

/** Byte sizes of every output of the pooling stage (see {@link SpargePoolOutputBytes}; the pooled ones from `spargePooledBytes`). */
export function spargePoolOutputBytes(problem: SpargePoolProblem | CheckedSpargePoolProblem): SpargePoolOutputBytes {
  const p = 'kmChunkRows' in problem ? problem : checkSpargePoolProblem(problem);
  const { batch, nhead: h, nheadK: hk, headDim: d } = p;
  const q8 = p.int8 ? p.batches * h * p.rowsQ * d : 0;
  const k8 = p.int8 ? p.batches * hk * p.rowsK * d : 0;
  const pooled = spargePooledBytes(p);
  return Object.freeze({
    ...pooled,
    km: batch * hk * d * 4,
    kmPartial: batch * hk * p.kmChunksMax * d * 4,
    q8,
    k8,
    // One fp32 scale per pooled block, over the same padded grid as the similarity flags.
    qScale: p.int8 ? pooled.simQ : 0,
    kScale: p.int8 ? pooled.simK : 0,
  });
}

/** Elements a strided tensor spans (0 for no rows): the last element's offset + 1 … through the head dim. */
export function spargeTensorSpan(s: SpargePoolStrides, batches: number, heads: number, rows: number, headDim: number): number {
  return rows === 0 ? 0 : (batches - 1) * s.batch + (heads - 1) * s.head + (rows - 1) * s.row + headDim;
}
