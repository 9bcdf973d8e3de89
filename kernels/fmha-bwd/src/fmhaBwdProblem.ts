// The Problem of the FMHA backward operator, in the forward's style: what to differentiate
// (shapes, batch or group mode, GQA, mask, scale, layouts/strides of the eight tensors) and
// whether dQ must be bitwise reproducible. Validated with typed errors naming the field; turned
// into @tilekit/fmha's FmhaBwdTraits for the pure launcher.
import {
  ATTENTION_LAYOUTS,
  AttentionMaskError,
  attentionTensorSpan,
  checkAttentionMaskSpec,
  formatAttentionMaskSpec,
  isCausalMask,
  longestSlot,
  noMask,
  packedAttentionStrides,
  parseAttentionMaskSpec,
  type AttentionLayout,
  type AttentionMaskSpec,
  type AttentionTensorStrides,
  type FmhaBwdTraits,
} from '@tilekit/fmha';
import { ArgumentError } from '@tilekit/numeric';

/** An FMHA backward problem field broke a rule; `argument` is `problem.<field>`. */
export class FmhaBwdArgumentError extends ArgumentError {}

/** Element types of Q, K, V, O, dO and dQ, dK, dV. */
export const FMHA_BWD_DTYPES = ['fp16', 'bf16'] as const;
export type FmhaBwdDType = (typeof FMHA_BWD_DTYPES)[number];

export const FMHA_BWD_PROBLEM_MAX_SEQLEN = 2 ** 30;
const MAX_HEADS = 65535;

/** The eight tensors of a backward call. */
export const FMHA_BWD_TENSORS = ['q', 'k', 'v', 'o', 'dO', 'dQ', 'dK', 'dV'] as const;
export type FmhaBwdTensor = (typeof FMHA_BWD_TENSORS)[number];

/**
 * What to differentiate: O = softmax(scale·Q·Kᵀ + mask)·V with the forward's O and LSE given, and
 * dO. Batch mode: `seqlenQ`/`seqlenK`. Group (varlen) mode: `seqstartQ`/`seqstartK` (batch + 1
 * cumulative rows from 0; every row of a slot is used). Query head h reads KV head ⌊h/(nheadQ/nheadK)⌋;
 * dK/dV sum over the query heads of a KV head. `inputLayout` is the layout of Q, K, V, dQ, dK, dV
 * (CK -iperm), `outputLayout` that of O and dO (CK -operm); explicit strides override them (the head
 * dim always contiguous). LSE and D are fp32 [batch][nheadQ][seqlenQ] (group mode [nheadQ][total rows]).
 */
export interface FmhaBwdProblem {
  readonly dtype: FmhaBwdDType;
  readonly batch: number;
  readonly nheadQ: number;
  /** Default nheadQ; must divide it. */
  readonly nheadK?: number;
  readonly hdimQ: number;
  /** Default hdimQ. */
  readonly hdimV?: number;
  readonly seqlenQ?: number;
  /** Batch mode; default seqlenQ. */
  readonly seqlenK?: number;
  readonly seqstartQ?: readonly number[];
  readonly seqstartK?: readonly number[];
  readonly inputLayout?: AttentionLayout;
  readonly outputLayout?: AttentionLayout;
  readonly strides?: Partial<Readonly<Record<FmhaBwdTensor, AttentionTensorStrides>>>;
  /** A spec or CK's `-mask=` string; default none. */
  readonly mask?: AttentionMaskSpec | string;
  /** Softmax scale of the forward (default 1/√hdimQ), rounded to fp32. */
  readonly scale?: number;
  /** dQ reduced in a fixed order (bitwise-reproducible runs); default false (atomic adds). */
  readonly deterministic?: boolean;
}

/** A problem with every default filled in. */
export interface CheckedFmhaBwdProblem {
  readonly dtype: FmhaBwdDType;
  readonly mode: 'batch' | 'group';
  readonly batch: number;
  readonly nheadQ: number;
  readonly nheadK: number;
  readonly hdimQ: number;
  readonly hdimV: number;
  /** Batch mode: rows per sequence; group mode: the longest query slot. */
  readonly seqlenQ: number;
  readonly seqlenK: number;
  /** Rows of Q (and of K/V) per head in the tensors: batch mode the seqlens, group mode the totals. */
  readonly rowsQ: number;
  readonly rowsK: number;
  readonly seqstartQ: readonly number[];
  readonly seqstartK: readonly number[];
  readonly inputLayout: AttentionLayout;
  readonly outputLayout: AttentionLayout;
  readonly strides: Readonly<Record<FmhaBwdTensor, AttentionTensorStrides>>;
  /** LSE and D element (b, h, row) at b·batch + h·head + row (group: row global, batch 0). */
  readonly lseStrides: { readonly batch: number; readonly head: number };
  readonly scale: number;
  readonly mask: AttentionMaskSpec;
  readonly deterministic: boolean;
}

function fail(field: string, rule: string, found: unknown): never {
  throw new FmhaBwdArgumentError(`problem.${field}`, rule, found);
}

function integer(field: string, v: unknown, min: number, max: number): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min || v > max) fail(field, `must be an integer in [${min}, ${max}]`, v);
  return v;
}

function seqstarts(field: string, s: unknown, batch: number): number[] {
  if (!Array.isArray(s) || s.length !== batch + 1) fail(field, `must be an array of batch + 1 = ${batch + 1} integers`, s);
  const out = (s as unknown[]).map((v, i) => integer(`${field}[${i}]`, v, 0, FMHA_BWD_PROBLEM_MAX_SEQLEN));
  if (out[0] !== 0) fail(`${field}[0]`, 'must be 0', out[0]);
  for (let i = 1; i < out.length; i++) if (out[i]! < out[i - 1]!) fail(field, `must be non-decreasing, but [${i}] = ${out[i]} < [${i - 1}] = ${out[i - 1]}`, s);
  return out;
}

function strides(field: string, given: AttentionTensorStrides | undefined, layout: AttentionLayout, nhead: number, rows: number, hdim: number, group: boolean): AttentionTensorStrides {
  if (given === undefined) {
    const packed = packedAttentionStrides(layout, nhead, rows, hdim);
    return Object.freeze({ ...packed, batch: group ? 0 : packed.batch });
  }
  if (typeof given !== 'object' || given === null) fail(field, 'must be { batch, head, row } element strides', given);
  const head = integer(`${field}.head`, given.head, 0, Number.MAX_SAFE_INTEGER);
  const row = integer(`${field}.row`, given.row, 0, Number.MAX_SAFE_INTEGER);
  if (layout === 'bhsd') {
    if (row < hdim) fail(`${field}.row`, `must be at least hdim = ${hdim} (bhsd: the head dim is contiguous inside a row)`, row);
    if (head < rows * row) fail(`${field}.head`, `must be at least rows·row = ${rows * row} (bhsd)`, head);
  } else {
    if (head < hdim) fail(`${field}.head`, `must be at least hdim = ${hdim} (bshd: the head dim is contiguous inside a head)`, head);
    if (row < nhead * head) fail(`${field}.row`, `must be at least nhead·head = ${nhead * head} (bshd)`, row);
  }
  if (group) {
    if (given.batch !== undefined && given.batch !== 0) fail(`${field}.batch`, 'must be 0 in group mode (batches are found through seqstart)', given.batch);
    return Object.freeze({ batch: 0, head, row });
  }
  const batch = integer(`${field}.batch`, given.batch, 0, Number.MAX_SAFE_INTEGER);
  const inner = layout === 'bhsd' ? nhead * head : rows * row;
  if (batch < inner) fail(`${field}.batch`, `must be at least ${inner} (${layout}: no overlap between batches)`, batch);
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
 * `FmhaBwdArgumentError` naming `problem.<field>`): dtype fp16 | bf16; batch, nheadQ, nheadK in
 * [1, 65535] with nheadQ % nheadK = 0; hdimQ, hdimV in [1, 1024] (which ones run is the catalog's
 * business: an unsupported one gives an unsupported launcher); batch mode: seqlens in [0, 2^30], no
 * seqstart; group mode: seqstartQ and seqstartK (both) with batch + 1 entries from 0,
 * non-decreasing, no seqlenQ/seqlenK; layouts bhsd | bshd; explicit strides keep the layout's order
 * without overlap (batch 0 in group mode); a valid mask; scale finite > 0 (default 1/√hdimQ, rounded
 * to fp32); deterministic boolean.
 */
export function checkFmhaBwdProblem(problem: FmhaBwdProblem): CheckedFmhaBwdProblem {
  if (typeof problem !== 'object' || problem === null) throw new FmhaBwdArgumentError('problem', 'must be an object', problem);
  const p = problem;
  if (!(FMHA_BWD_DTYPES as readonly unknown[]).includes(p.dtype)) fail('dtype', `must be one of ${FMHA_BWD_DTYPES.join(', ')}`, p.dtype);
  const batch = integer('batch', p.batch, 1, 65535);
  const nheadQ = integer('nheadQ', p.nheadQ, 1, MAX_HEADS);
  const nheadK = integer('nheadK', p.nheadK ?? nheadQ, 1, MAX_HEADS);
  if (nheadQ % nheadK !== 0) fail('nheadK', `must divide nheadQ = ${nheadQ} (GQA/MQA: nheadQ % nheadK == 0)`, nheadK);
  const hdimQ = integer('hdimQ', p.hdimQ, 1, 1024);
  const hdimV = integer('hdimV', p.hdimV ?? hdimQ, 1, 1024);
  const group = p.seqstartQ !== undefined || p.seqstartK !== undefined;
  let seqstartQ: number[] = [];
  let seqstartK: number[] = [];
  let seqlenQ: number;
  let seqlenK: number;
  let rowsQ: number;
  let rowsK: number;
  if (group) {
    if (p.seqlenQ !== undefined) fail('seqlenQ', 'must be omitted in group mode (seqstartQ gives the query sequences)', p.seqlenQ);
    if (p.seqlenK !== undefined) fail('seqlenK', 'must be omitted in group mode (seqstartK gives the key sequences)', p.seqlenK);
    if (p.seqstartQ === undefined) fail('seqstartQ', 'is required in group mode (with seqstartK)', p.seqstartQ);
    if (p.seqstartK === undefined) fail('seqstartK', 'is required in group mode (with seqstartQ)', p.seqstartK);
    seqstartQ = seqstarts('seqstartQ', p.seqstartQ, batch);
    seqstartK = seqstarts('seqstartK', p.seqstartK, batch);
    seqlenQ = longestSlot(seqstartQ);
    seqlenK = longestSlot(seqstartK);
    rowsQ = seqstartQ[batch]!;
    rowsK = seqstartK[batch]!;
  } else {
    seqlenQ = integer('seqlenQ', p.seqlenQ, 0, FMHA_BWD_PROBLEM_MAX_SEQLEN);
    seqlenK = integer('seqlenK', p.seqlenK ?? seqlenQ, 0, FMHA_BWD_PROBLEM_MAX_SEQLEN);
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
  const given = p.strides ?? {};
  if (typeof given !== 'object' || given === null) fail('strides', 'must be an object of per-tensor strides', given);
  for (const key of Object.keys(given)) if (!(FMHA_BWD_TENSORS as readonly string[]).includes(key)) fail(`strides.${key}`, `is not a tensor of the backward (${FMHA_BWD_TENSORS.join(', ')})`, key);
  const shape: Record<FmhaBwdTensor, { layout: AttentionLayout; nhead: number; rows: number; hdim: number }> = {
    q: { layout: inputLayout, nhead: nheadQ, rows: rowsQ, hdim: hdimQ },
    k: { layout: inputLayout, nhead: nheadK, rows: rowsK, hdim: hdimQ },
    v: { layout: inputLayout, nhead: nheadK, rows: rowsK, hdim: hdimV },
    o: { layout: outputLayout, nhead: nheadQ, rows: rowsQ, hdim: hdimV },
    dO: { layout: outputLayout, nhead: nheadQ, rows: rowsQ, hdim: hdimV },
    dQ: { layout: inputLayout, nhead: nheadQ, rows: rowsQ, hdim: hdimQ },
    dK: { layout: inputLayout, nhead: nheadK, rows: rowsK, hdim: hdimQ },
    dV: { layout: inputLayout, nhead: nheadK, rows: rowsK, hdim: hdimV },
  };
  const all = Object.fromEntries(FMHA_BWD_TENSORS.map((t) => [t, strides(`strides.${t}`, given[t], shape[t].layout, shape[t].nhead, shape[t].rows, shape[t].hdim, group)])) as Record<FmhaBwdTensor, AttentionTensorStrides>;
  const mask = maskOf(p.mask);
  const scaleIn = p.scale ?? 1 / Math.sqrt(hdimQ);
  if (typeof scaleIn !== 'number' || !Number.isFinite(scaleIn) || scaleIn <= 0) fail('scale', 'must be a finite number > 0', scaleIn);
  const scale = Math.fround(scaleIn);
  if (!Number.isFinite(scale) || scale <= 0) fail('scale', 'must be a positive number representable in fp32', scaleIn);
  const deterministic = p.deterministic ?? false;
  if (typeof deterministic !== 'boolean') fail('deterministic', 'must be a boolean', deterministic);
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
    inputLayout,
    outputLayout,
    strides: Object.freeze(all),
    lseStrides: Object.freeze({ batch: group ? 0 : nheadQ * rowsQ, head: rowsQ }),
    scale,
    mask,
    deterministic,
  });
}

/** The pure launcher's traits of a checked problem (no bias, dropout or dBias: the kernels have none). */
export function fmhaBwdTraitsOf(p: CheckedFmhaBwdProblem): FmhaBwdTraits {
  const group = p.mode === 'group';
  return {
    seqlenQ: group ? p.rowsQ : p.seqlenQ,
    seqlenK: group ? p.rowsK : p.seqlenK,
    batch: p.batch,
    maxSeqlenQ: p.seqlenQ,
    maxSeqlenK: p.seqlenK,
    hdimQ: p.hdimQ,
    hdimV: p.hdimV,
    nheadQ: p.nheadQ,
    nheadK: p.nheadK,
    dtype: p.dtype,
    groupMode: group,
    mask: p.mask,
    deterministic: p.deterministic,
    ...(group ? { seqstartQ: p.seqstartQ, seqstartK: p.seqstartK } : {}),
  };
}

/** Per batch: query rows and key rows. */
export function fmhaBwdSequences(p: CheckedFmhaBwdProblem): { readonly sq: number; readonly sk: number }[] {
  if (p.mode === 'batch') return Array.from({ length: p.batch }, () => ({ sq: p.seqlenQ, sk: p.seqlenK }));
  return Array.from({ length: p.batch }, (_, b) => ({ sq: p.seqstartQ[b + 1]! - p.seqstartQ[b]!, sk: p.seqstartK[b + 1]! - p.seqstartK[b]! }));
}

/**
 * FLOPs credited to a backward call (BENCHMARKS.md): 2.5 × the forward's Σ_b 2·nheadQ·sq·sk·(hdimQ +
 * hdimV), the forward's halved for a causal mask when sq = sk.
 */
export function fmhaBwdProblemFlops(p: CheckedFmhaBwdProblem): number {
  const causal = isCausalMask(p.mask);
  return 2.5 * fmhaBwdSequences(p).reduce((sum, { sq, sk }) => sum + (2 * p.nheadQ * sq * sk * (p.hdimQ + p.hdimV)) / (causal && sq === sk ? 2 : 1), 0);
}

/** Elements each tensor spans in its strides, and LSE/D entries. */
export function fmhaBwdOperandElements(p: CheckedFmhaBwdProblem): Readonly<Record<FmhaBwdTensor | 'lse', number>> {
  const batches = p.mode === 'group' ? 1 : p.batch;
  const s = p.strides;
  return {
    q: attentionTensorSpan(s.q, batches, p.nheadQ, p.rowsQ, p.hdimQ),
    k: attentionTensorSpan(s.k, batches, p.nheadK, p.rowsK, p.hdimQ),
    v: attentionTensorSpan(s.v, batches, p.nheadK, p.rowsK, p.hdimV),
    o: attentionTensorSpan(s.o, batches, p.nheadQ, p.rowsQ, p.hdimV),
    dO: attentionTensorSpan(s.dO, batches, p.nheadQ, p.rowsQ, p.hdimV),
    dQ: attentionTensorSpan(s.dQ, batches, p.nheadQ, p.rowsQ, p.hdimQ),
    dK: attentionTensorSpan(s.dK, batches, p.nheadK, p.rowsK, p.hdimQ),
    dV: attentionTensorSpan(s.dV, batches, p.nheadK, p.rowsK, p.hdimV),
    lse: batches * p.nheadQ * p.rowsQ,
  };
}

/** `fp16 group 3x8/2h sq[1,0,259] sk[17,5,300] d128/128 bhsd>bhsd mask=b det` — one line for logs. */
export function formatFmhaBwdProblem(p: CheckedFmhaBwdProblem): string {
  const heads = p.nheadK === p.nheadQ ? `${p.nheadQ}h` : `${p.nheadQ}/${p.nheadK}h`;
  const seqs = fmhaBwdSequences(p);
  const seq = p.mode === 'group' ? `sq[${seqs.map((s) => s.sq).join(',')}] sk[${seqs.map((s) => s.sk).join(',')}]` : `${p.seqlenQ}x${p.seqlenK}`;
  const extras = [p.mask.kind === 'none' ? '' : `mask=${formatAttentionMaskSpec(p.mask)}`, p.deterministic ? 'deterministic' : 'atomic dQ'].filter(Boolean);
  return [`${p.dtype} ${p.mode} ${p.batch}x${heads} ${seq} d${p.hdimQ}/${p.hdimV} ${p.inputLayout}>${p.outputLayout}`, ...extras].join(' ');
}
