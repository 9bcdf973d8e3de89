import {
  ATTENTION_LAYOUTS,
  AttentionMaskError,
  checkAttentionMaskSpec,
  formatAttentionMaskSpec,
  isCausalMask,
  noMask,
  packedAttentionStrides,
  parseAttentionMaskSpec,
  type AttentionFwdArgs,
  type AttentionLayout,
  type AttentionMaskSpec,
  type AttentionTensorStrides,
} from '@tilekit/fmha';
import { ArgumentError } from '@tilekit/numeric';

/** An FMHA forward argument broke a rule; `argument` is `problem.<field>`. */
export class FmhaFwdArgumentError extends ArgumentError {}

/** Element types of Q, K, V and O (fp32 accumulation, P narrowed to the same type). */
export const FMHA_FWD_DTYPES = ['fp16', 'bf16'] as const;
export type FmhaFwdDType = (typeof FMHA_FWD_DTYPES)[number];

/** The (hdimQ, hdimV) pairs the operator has instances for. */
export const FMHA_FWD_HEAD_DIMS: readonly { readonly hdimQ: number; readonly hdimV: number }[] = Object.freeze(
  [
    [32, 32],
    [64, 64],
    [96, 96],
    [128, 128],
    [192, 128],
    [256, 256],
  ].map(([hdimQ, hdimV]) => Object.freeze({ hdimQ: hdimQ!, hdimV: hdimV! })),
);

/** The largest sequence (and group-mode total) length: the kernels' int32 index arithmetic stays exact below it. */
export const FMHA_FWD_MAX_SEQLEN = 2 ** 30;
/** The largest batch and head counts (grid dimensions). */
export const FMHA_FWD_MAX_BATCH = 65535;
export const FMHA_FWD_MAX_HEADS = 65535;
/** The most key splits of split-KV (CK's kMaxSplits = 2^7). */
export const FMHA_FWD_MAX_SPLITS = 128;

/**
 * The Problem of the FMHA forward operator (CK-tile's fmha_fwd arguments, what to compute):
 * O = softmax(scale·Q·Kᵀ + mask)·V, optional LSE. Batch mode: `seqlenQ`/`seqlenK`. Group (varlen)
 * mode: `seqstartQ`/`seqstartK` (batch + 1 entries from 0, non-decreasing) and optionally `seqlenK`
 * per batch (keys used at the start of each slot). Query head h reads kv head ⌊h / (nheadQ / nheadK)⌋.
 */
export interface FmhaFwdProblem {
  readonly dtype: FmhaFwdDType;
  readonly batch: number;
  readonly nheadQ: number;
  /** Default nheadQ (GQA/MQA when smaller; must divide nheadQ). */
  readonly nheadK?: number;
  readonly hdimQ: number;
  /** Default hdimQ; 128 with hdimQ 192. */
  readonly hdimV?: number;
  readonly seqlenQ?: number;
  /** Batch mode: keys per batch (default seqlenQ). Group mode: optional keys used per batch. */
  readonly seqlenK?: number | readonly number[];
  readonly seqstartQ?: readonly number[];
  readonly seqstartK?: readonly number[];
  /** Layout of Q, K and V (CK -iperm: 1 bhsd, 0 bshd; default bhsd). */
  readonly inputLayout?: AttentionLayout;
  /** Layout of O (CK -operm; default bhsd). */
  readonly outputLayout?: AttentionLayout;
  /** Explicit element strides (default packed in the layout); the head dim is always contiguous. */
  readonly qStrides?: AttentionTensorStrides;
  readonly kStrides?: AttentionTensorStrides;
  readonly vStrides?: AttentionTensorStrides;
  readonly oStrides?: AttentionTensorStrides;
  /** A spec, or CK's `-mask=` string (`0`, `t`, `b`, `t:l,r`, `b:l,r`, `xt:w`, `g:y,x`); default none. */
  readonly mask?: AttentionMaskSpec | string;
  /** Also write LSE (fp32, natural log; default false). */
  readonly lse?: boolean;
  /** Softmax scale (default 1/√hdimQ); rounded to fp32 as the kernel receives it. */
  readonly scale?: number;
  /**
   * Key splits of split-KV with a combine kernel (default 1 = no split), or 'auto': the runner picks
   * them for the GPU (`chooseFmhaFwdSplits`).
   */
  readonly splitKv?: number | 'auto';
}

/** Batch or group (varlen) mode. */
export type FmhaFwdProblemMode = 'batch' | 'group';

/** A problem with every default filled in (assignable to the launcher's problem). */
export interface CheckedFmhaFwdProblem {
  readonly dtype: FmhaFwdDType;
  readonly mode: FmhaFwdProblemMode;
  readonly batch: number;
  readonly nheadQ: number;
  readonly nheadK: number;
  readonly hdimQ: number;
  readonly hdimV: number;
  /** Batch mode: rows per sequence; group mode: the longest query sequence. */
  readonly seqlenQ: number;
  /** Batch mode: keys per sequence; group mode: the longest key sequence used. */
  readonly seqlenK: number;
  /** Rows of Q and of K/V per head in the tensors: batch mode the seqlens, group mode the totals. */
  readonly rowsQ: number;
  readonly rowsK: number;
  /** Group mode only (else empty): seqstartQ, seqstartK, and the keys used per batch. */
  readonly seqstartQ: readonly number[];
  readonly seqstartK: readonly number[];
  readonly seqlensK: readonly number[];
  /** Whether the caller gave per-batch seqlenK in group mode (the kernel then reads it). */
  readonly hasSeqlenK: boolean;
  readonly inputLayout: AttentionLayout;
  readonly outputLayout: AttentionLayout;
  readonly qStrides: AttentionTensorStrides;
  readonly kStrides: AttentionTensorStrides;
  readonly vStrides: AttentionTensorStrides;
  readonly oStrides: AttentionTensorStrides;
  readonly lse: boolean;
  /** LSE element (b, h, row) at b·batch + h·head + row (group: row is global, batch stride unused). */
  readonly lseStrides: { readonly batch: number; readonly head: number };
  readonly scale: number;
  readonly mask: AttentionMaskSpec;
  /** Key splits (1 until the runner resolves 'auto'). */
  readonly numSplits: number;
  /** The caller asked for splitKv 'auto': the runner replaces numSplits by `chooseFmhaFwdSplits`. */
  readonly splitKvAuto: boolean;
}

function fail(field: string, rule: string, found: unknown): never {
  throw new FmhaFwdArgumentError(`problem.${field}`, rule, found);
}

function integer(field: string, v: unknown, min: number, max: number): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min || v > max) fail(field, `must be an integer in [${min}, ${max}]`, v);
  return v;
}

function seqstarts(field: string, s: unknown, batch: number): number[] {
  if (!Array.isArray(s) || s.length !== batch + 1) fail(field, `must be an array of batch + 1 = ${batch + 1} integers`, s);
  const out = (s as unknown[]).map((v, i) => integer(`${field}[${i}]`, v, 0, FMHA_FWD_MAX_SEQLEN));
  if (out[0] !== 0) fail(`${field}[0]`, 'must be 0', out[0]);
  for (let i = 1; i < out.length; i++) if (out[i]! < out[i - 1]!) fail(field, `must be non-decreasing, but [${i}] = ${out[i]} < [${i - 1}] = ${out[i - 1]}`, s);
  return out;
}

/**
 * Explicit strides must keep the layout's order with no overlap: each dimension's stride at least
 * the packed extent of the dimensions inside it (bhsd: row ≥ hdim, head ≥ rows·row, batch ≥
 * nhead·head; bshd: head ≥ hdim, row ≥ nhead·head, batch ≥ rows·row); batch unused in group mode.
 */
function strides(field: string, given: AttentionTensorStrides | undefined, layout: AttentionLayout, nhead: number, rows: number, hdim: number, group: boolean): AttentionTensorStrides {
  if (given === undefined) {
    const packed = packedAttentionStrides(layout, nhead, rows, hdim);
    return Object.freeze({ ...packed, batch: group ? 0 : packed.batch });
  }
  if (typeof given !== 'object' || given === null) fail(field, 'must be { batch, head, row } element strides', given);
  const { head, row } = given;
  for (const [k, v] of [['head', head], ['row', row]] as const) integer(`${field}.${k}`, v, 0, Number.MAX_SAFE_INTEGER);
  if (layout === 'bhsd') {
    if (row < hdim) fail(`${field}.row`, `must be at least hdim = ${hdim} (bhsd: the head dim is contiguous inside a row)`, row);
    if (head < rows * row) fail(`${field}.head`, `must be at least rows·row = ${rows}·${row} = ${rows * row} (bhsd)`, head);
  } else {
    if (head < hdim) fail(`${field}.head`, `must be at least hdim = ${hdim} (bshd: the head dim is contiguous inside a head)`, head);
    if (row < nhead * head) fail(`${field}.row`, `must be at least nhead·head = ${nhead}·${head} = ${nhead * head} (bshd)`, row);
  }
  if (group) {
    if (given.batch !== undefined && given.batch !== 0) fail(`${field}.batch`, 'must be 0 in group mode (batches are found through seqstart)', given.batch);
    return Object.freeze({ batch: 0, head, row });
  }
  const batch = integer(`${field}.batch`, given.batch, 0, Number.MAX_SAFE_INTEGER);
  const inner = layout === 'bhsd' ? nhead * head : rows * row;
  if (batch < inner) fail(`${field}.batch`, `must be at least ${layout === 'bhsd' ? 'nhead·head' : 'rows·row'} = ${inner} (${layout})`, batch);
  return Object.freeze({ batch, head, row });
}

function maskOf(given: AttentionMaskSpec | string | undefined): AttentionMaskSpec {
  try {
    if (given === undefined) return noMask;
    return typeof given === 'string' ? parseAttentionMaskSpec(given) : checkAttentionMaskSpec(given, 'mask');
  } catch (e) {
    if (e instanceof AttentionMaskError) fail('mask', `must be a valid mask (${e.message})`, given);
    throw e;
  }
}

/**
 * Validates a problem and returns it with defaults, frozen. Rules (each violation throws
 * `FmhaFwdArgumentError` naming `problem.<field>` and the rule): dtype fp16 | bf16; batch, nheadQ,
 * nheadK in [1, 65535] with nheadQ % nheadK = 0; (hdimQ, hdimV) one of 32/32, 64/64, 96/96,
 * 128/128, 192/128, 256/256; batch mode: seqlens in [0, 2^30], no seqstart; group mode: seqstartQ
 * and seqstartK with batch + 1 entries from 0, non-decreasing, totals ≤ 2^30, per-batch seqlenK
 * (optional) at most its slot; layouts bhsd | bshd; explicit strides keep the layout's order
 * without overlap (see `strides`); a valid mask (spec or CK string); lse boolean; scale finite > 0
 * (default 1/√hdimQ, rounded to fp32); splitKv an integer in [1, 128] or 'auto' (numSplits 1,
 * `splitKvAuto` true).
 */
export function checkFmhaFwdProblem(problem: FmhaFwdProblem): CheckedFmhaFwdProblem {
  if (typeof problem !== 'object' || problem === null) throw new FmhaFwdArgumentError('problem', 'must be an object', problem);
  const p = problem;
  if (!(FMHA_FWD_DTYPES as readonly string[]).includes(p.dtype)) fail('dtype', `must be one of ${FMHA_FWD_DTYPES.join(', ')}`, p.dtype);
  const batch = integer('batch', p.batch, 1, FMHA_FWD_MAX_BATCH);
  const nheadQ = integer('nheadQ', p.nheadQ, 1, FMHA_FWD_MAX_HEADS);
  const nheadK = integer('nheadK', p.nheadK ?? nheadQ, 1, FMHA_FWD_MAX_HEADS);
  if (nheadQ % nheadK !== 0) fail('nheadK', `must divide nheadQ = ${nheadQ} (GQA/MQA: nheadQ % nheadK == 0)`, nheadK);
  const hdimQ = integer('hdimQ', p.hdimQ, 1, 1024);
  const pairs = FMHA_FWD_HEAD_DIMS.filter((d) => d.hdimQ === hdimQ);
  if (pairs.length === 0) fail('hdimQ', `must be one of ${[...new Set(FMHA_FWD_HEAD_DIMS.map((d) => d.hdimQ))].join(', ')}`, hdimQ);
  const hdimV = integer('hdimV', p.hdimV ?? pairs[0]!.hdimV, 1, 1024);
  if (!pairs.some((d) => d.hdimV === hdimV)) fail('hdimV', `must be ${pairs.map((d) => d.hdimV).join(' or ')} with hdimQ = ${hdimQ}`, hdimV);

  const group = p.seqstartQ !== undefined || p.seqstartK !== undefined;
  let seqlenQ: number;
  let seqlenK: number;
  let rowsQ: number;
  let rowsK: number;
  let seqstartQ: number[] = [];
  let seqstartK: number[] = [];
  let seqlensK: number[] = [];
  let hasSeqlenK = false;
  if (group) {
    if (p.seqlenQ !== undefined) fail('seqlenQ', 'must be omitted in group mode (seqstartQ gives the query sequences)', p.seqlenQ);
    if (p.seqstartQ === undefined) fail('seqstartQ', 'is required in group mode (with seqstartK)', p.seqstartQ);
    if (p.seqstartK === undefined) fail('seqstartK', 'is required in group mode (with seqstartQ)', p.seqstartK);
    seqstartQ = seqstarts('seqstartQ', p.seqstartQ, batch);
    seqstartK = seqstarts('seqstartK', p.seqstartK, batch);
    const slots = seqstartK.slice(1).map((e, b) => e - seqstartK[b]!);
    if (p.seqlenK === undefined) seqlensK = slots;
    else {
      if (!Array.isArray(p.seqlenK) || p.seqlenK.length !== batch) fail('seqlenK', `in group mode must be an array of batch = ${batch} integers`, p.seqlenK);
      hasSeqlenK = true;
      seqlensK = (p.seqlenK as readonly number[]).map((v, b) => {
        const n = integer(`seqlenK[${b}]`, v, 0, FMHA_FWD_MAX_SEQLEN);
        if (n > slots[b]!) fail(`seqlenK[${b}]`, `must be at most seqstartK[${b + 1}] − seqstartK[${b}] = ${slots[b]}`, n);
        return n;
      });
    }
    seqlenQ = Math.max(0, ...seqstartQ.slice(1).map((e, b) => e - seqstartQ[b]!));
    seqlenK = Math.max(0, ...seqlensK);
    rowsQ = seqstartQ[batch]!;
    rowsK = seqstartK[batch]!;
  } else {
    seqlenQ = integer('seqlenQ', p.seqlenQ, 0, FMHA_FWD_MAX_SEQLEN);
    if (Array.isArray(p.seqlenK)) fail('seqlenK', 'must be a number in batch mode (per-batch keys need group mode)', p.seqlenK);
    seqlenK = integer('seqlenK', p.seqlenK ?? seqlenQ, 0, FMHA_FWD_MAX_SEQLEN);
    rowsQ = seqlenQ;
    rowsK = seqlenK;
  }

  const layout = (field: string, v: unknown): AttentionLayout => {
    const l = v ?? 'bhsd';
    if (!(ATTENTION_LAYOUTS as readonly unknown[]).includes(l)) fail(field, `must be one of ${ATTENTION_LAYOUTS.join(', ')}`, l);
    return l as AttentionLayout;
  };
  const inputLayout = layout('inputLayout', p.inputLayout);
  const outputLayout = layout('outputLayout', p.outputLayout);
  const qStrides = strides('qStrides', p.qStrides, inputLayout, nheadQ, rowsQ, hdimQ, group);
  const kStrides = strides('kStrides', p.kStrides, inputLayout, nheadK, rowsK, hdimQ, group);
  const vStrides = strides('vStrides', p.vStrides, inputLayout, nheadK, rowsK, hdimV, group);
  const oStrides = strides('oStrides', p.oStrides, outputLayout, nheadQ, rowsQ, hdimV, group);

  const mask = maskOf(p.mask);
  const lse = p.lse ?? false;
  if (typeof lse !== 'boolean') fail('lse', 'must be a boolean', lse);
  const scaleIn = p.scale ?? 1 / Math.sqrt(hdimQ);
  if (typeof scaleIn !== 'number' || !Number.isFinite(scaleIn) || scaleIn <= 0) fail('scale', 'must be a finite number > 0', scaleIn);
  const scale = Math.fround(scaleIn);
  if (!Number.isFinite(scale) || scale <= 0) fail('scale', 'must be a positive number representable in fp32', scaleIn);
  const splitKvAuto = p.splitKv === 'auto';
  const numSplits = splitKvAuto ? 1 : integer('splitKv', p.splitKv ?? 1, 1, FMHA_FWD_MAX_SPLITS);

  return Object.freeze({
    dtype: p.dtype,
    mode: group ? 'group' : 'batch',
    batch,
    nheadQ,
    nheadK,
    hdimQ,
    hdimV,
    seqlenQ,
    seqlenK,
    rowsQ,
    rowsK,
    seqstartQ: Object.freeze(seqstartQ),
    seqstartK: Object.freeze(seqstartK),
    seqlensK: Object.freeze(seqlensK),
    hasSeqlenK,
    inputLayout,
    outputLayout,
    qStrides,
    kStrides,
    vStrides,
    oStrides,
    lse,
    lseStrides: Object.freeze({ batch: group ? 0 : nheadQ * rowsQ, head: rowsQ }),
    scale,
    mask,
    numSplits,
    splitKvAuto,
  });
}

/** Per batch: query rows and keys used. */
function sequences(p: CheckedFmhaFwdProblem): { readonly sq: number; readonly sk: number }[] {
  if (p.mode === 'batch') return Array.from({ length: p.batch }, () => ({ sq: p.seqlenQ, sk: p.seqlenK }));
  return p.seqlensK.map((sk, b) => ({ sq: p.seqstartQ[b + 1]! - p.seqstartQ[b]!, sk }));
}

/**
 * FLOPs as BENCHMARKS.md counts them: Σ over batches of 2·nheadQ·sq·sk·(hdimQ + hdimV), halved
 * for a causal mask when sq = sk (other masks count the full product, as CK's example does).
 */
export function fmhaFwdProblemFlops(p: CheckedFmhaFwdProblem): number {
  const causal = isCausalMask(p.mask);
  return sequences(p).reduce((sum, { sq, sk }) => sum + (2 * p.nheadQ * sq * sk * (p.hdimQ + p.hdimV)) / (causal && sq === sk ? 2 : 1), 0);
}

/** Elements each tensor spans (Q, K, V, O in their strides; LSE per (batch, head, row)). */
export function fmhaFwdOperandElements(p: CheckedFmhaFwdProblem): { readonly q: number; readonly k: number; readonly v: number; readonly o: number; readonly lse: number } {
  const batches = p.mode === 'group' ? 1 : p.batch;
  const span = (s: AttentionTensorStrides, nhead: number, rows: number, hdim: number): number =>
    nhead === 0 || rows === 0 ? 0 : (batches - 1) * s.batch + (nhead - 1) * s.head + (rows - 1) * s.row + hdim;
  return {
    q: span(p.qStrides, p.nheadQ, p.rowsQ, p.hdimQ),
    k: span(p.kStrides, p.nheadK, p.rowsK, p.hdimQ),
    v: span(p.vStrides, p.nheadK, p.rowsK, p.hdimV),
    o: span(p.oStrides, p.nheadQ, p.rowsQ, p.hdimV),
    lse: batches * p.nheadQ * p.rowsQ,
  };
}

/**
 * The CPU reference's arguments (`referenceAttentionFwd` of @tilekit/fmha) for a checked problem
 * and its host storage (fp16/bf16 bit patterns in Q/K/V's strides): same shapes, strides, scale
 * (the fp32 value the kernel gets) and mask; O in the problem's output strides; LSE in the same
 * layout as the kernel's (`lseStrides`).
 */
export function fmhaFwdReferenceArgs(p: CheckedFmhaFwdProblem, data: { readonly q: Uint16Array; readonly k: Uint16Array; readonly v: Uint16Array }): AttentionFwdArgs {
  const operand = (d: Uint16Array, strides: AttentionTensorStrides) => ({ dtype: p.dtype, data: d, strides });
  const mode =
    p.mode === 'group'
      ? { seqstartQ: p.seqstartQ, seqstartK: p.seqstartK, ...(p.hasSeqlenK ? { seqlenK: p.seqlensK } : {}) }
      : { seqlenQ: p.seqlenQ, seqlenK: p.seqlenK };
  return {
    batch: p.batch,
    nheadQ: p.nheadQ,
    nheadK: p.nheadK,
    hdimQ: p.hdimQ,
    hdimV: p.hdimV,
    ...mode,
    q: operand(data.q, p.qStrides),
    k: operand(data.k, p.kStrides),
    v: operand(data.v, p.vStrides),
    oStrides: p.oStrides,
    scale: p.scale,
    mask: p.mask,
  };
}

/** `fp16 batch 2x16/8h 8192x8192 d128/128 bhsd>bshd mask=t lse split4` — one line for logs. */
export function formatFmhaFwdProblem(problem: CheckedFmhaFwdProblem): string {
  const p = problem;
  const heads = p.nheadK === p.nheadQ ? `${p.nheadQ}h` : `${p.nheadQ}/${p.nheadK}h`;
  const seq = p.mode === 'group' ? `sq[${p.seqstartQ.slice(1).map((e, b) => e - p.seqstartQ[b]!).join(',')}] sk[${p.seqlensK.join(',')}]` : `${p.seqlenQ}x${p.seqlenK}`;
  const extras = [p.mask.kind === 'none' ? '' : `mask=${formatAttentionMaskSpec(p.mask)}`, p.lse ? 'lse' : '', p.splitKvAuto ? 'split=auto' : p.numSplits > 1 ? `split${p.numSplits}` : ''].filter(Boolean);
  return [`${p.dtype} ${p.mode} ${p.batch}x${heads} ${seq} d${p.hdimQ}/${p.hdimV} ${p.inputLayout}>${p.outputLayout}`, ...extras].join(' ');
}
