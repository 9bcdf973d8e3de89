import { ArgumentError, decode } from '@tilekit/numeric';
import { checkAttentionScoreModifier, type AttentionScoreModifier } from './attentionScoreModifier.ts';
import { checkAttentionMaskSpec, noMask, type AttentionMaskSpec } from '../mask/attentionMaskSpec.ts';
import type { AttentionProblemFields } from '../problem/attentionProblemFields.ts';
import { attentionTensorSpan, packedAttentionStrides, type AttentionTensorStrides } from './attentionTensorLayout.ts';

/** Storage dtypes the references read: fp16/bf16 bit patterns (Uint16Array) or fp32 values (Float32Array). */
export type AttentionStorageDType = 'fp16' | 'bf16' | 'fp32';

/** One input tensor: its storage and strides (see `AttentionTensorStrides`). */
export interface AttentionOperand {
  readonly dtype: AttentionStorageDType;
  readonly data: Uint16Array | Float32Array;
  readonly strides: AttentionTensorStrides;
}

/**
 * What to compute: O = softmax(scale·Q·Kᵀ + mask)·V per batch and query head, CK-tile's forward.
 * Batch mode gives `seqlenQ`/`seqlenK`; group (varlen) mode gives `seqstartQ`/`seqstartK`
 * (length batch + 1, from 0, non-decreasing) and optionally `seqlenK` per batch (keys actually used,
 * at most the slot seqstartK[b + 1] − seqstartK[b]). Query head h reads key/value head
 * ⌊h / (nheadQ / nheadK)⌋ (GQA/MQA).
 */
export interface AttentionFwdArgs extends AttentionProblemFields {
  readonly q: AttentionOperand;
  readonly k: AttentionOperand;
  readonly v: AttentionOperand;
  /** Strides of O (default packed bhsd). */
  readonly oStrides?: AttentionTensorStrides;
  /** Default 1/√hdimQ. */
  readonly scale?: number;
  /** Default no mask. */
  readonly mask?: AttentionMaskSpec;
  /** Soft-capping or ALiBi applied to the scaled scores before the softmax (default none). */
  readonly scoreModifier?: AttentionScoreModifier;
}

/** The arguments with defaults filled and the per-batch sequences resolved. */
export interface ResolvedAttentionFwdArgs {
  readonly batch: number;
  readonly nheadQ: number;
  readonly nheadK: number;
  readonly hdimQ: number;
  readonly hdimV: number;
  readonly groupMode: boolean;
  /** Per batch: query and key rows, and where they start (group: global row; batch: 0). */
  readonly seqlensQ: readonly number[];
  readonly seqlensK: readonly number[];
  readonly rowStartsQ: readonly number[];
  readonly rowStartsK: readonly number[];
  /** Rows of O and LSE per head: seqlenQ (batch mode) or the total (group mode). */
  readonly rowsQ: number;
  readonly scale: number;
  readonly mask: AttentionMaskSpec;
  readonly scoreModifier: AttentionScoreModifier | undefined;
  readonly oStrides: AttentionTensorStrides;
  /** Elements O spans. */
  readonly oElements: number;
}

function count(where: string, v: unknown, min = 0): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min) throw new ArgumentError(where, `must be an integer ≥ ${min}`, v);
  return v;
}

function seqstarts(where: string, s: unknown, batch: number): number[] {
  if (!Array.isArray(s) || s.length !== batch + 1)
    throw new ArgumentError(where, `must be an array of batch + 1 = ${batch + 1} integers`, s);
  const out = s.map((v, i) => count(`${where}[${i}]`, v));
  if (out[0] !== 0) throw new ArgumentError(`${where}[0]`, 'must be 0', out[0]);
  for (let i = 1; i < out.length; i++) if (out[i]! < out[i - 1]!) throw new ArgumentError(where, `must be non-decreasing (index ${i})`, s);
  return out;
}

/**
 * Checks the arguments of the references and resolves per-batch sequences, strides and defaults.
 * @throws ArgumentError naming the argument and the rule.
 */
export function resolveAttentionFwdArgs(args: AttentionFwdArgs): ResolvedAttentionFwdArgs {
  const batch = count('batch', args.batch);
  const nheadQ = count('nheadQ', args.nheadQ, 1);
  const nheadK = count('nheadK', args.nheadK ?? nheadQ, 1);
  if (nheadQ % nheadK !== 0) throw new ArgumentError('nheadK', `must divide nheadQ = ${nheadQ}`, nheadK);
  const hdimQ = count('hdimQ', args.hdimQ, 1);
  const hdimV = count('hdimV', args.hdimV ?? hdimQ, 1);
  const groupMode = args.seqstartQ !== undefined;
  let seqlensQ: number[];
  let seqlensK: number[];
  let rowStartsQ: number[];
  let rowStartsK: number[];
  let rowsQ: number;
  let rowsK: number;
  if (groupMode) {
    const sq = seqstarts('seqstartQ', args.seqstartQ, batch);
    const sk = seqstarts('seqstartK', args.seqstartK, batch);
    seqlensQ = sq.slice(1).map((e, b) => e - sq[b]!);
    const slots = sk.slice(1).map((e, b) => e - sk[b]!);
    if (args.seqlenK === undefined) seqlensK = slots;
    else {
      if (!Array.isArray(args.seqlenK) || args.seqlenK.length !== batch)
        throw new ArgumentError('seqlenK', `in group mode must be an array of batch = ${batch} integers`, args.seqlenK);
      seqlensK = args.seqlenK.map((v, b) => {
        const n = count(`seqlenK[${b}]`, v);
        if (n > slots[b]!)
          throw new ArgumentError(`seqlenK[${b}]`, `must be at most seqstartK[${b + 1}] − seqstartK[${b}] = ${slots[b]}`, n);
        return n;
      });
    }
    rowStartsQ = sq.slice(0, batch);
    rowStartsK = sk.slice(0, batch);
    rowsQ = sq[batch]!;
    rowsK = sk[batch]!;
  } else {
    if (args.seqstartK !== undefined) throw new ArgumentError('seqstartK', 'is only for group mode (with seqstartQ)', args.seqstartK);
    const sq = count('seqlenQ', args.seqlenQ);
    const sk = count('seqlenK', args.seqlenK);
    seqlensQ = Array<number>(batch).fill(sq);
    seqlensK = Array<number>(batch).fill(sk);
    rowStartsQ = Array<number>(batch).fill(0);
    rowStartsK = Array<number>(batch).fill(0);
    rowsQ = sq;
    rowsK = sk;
  }
  const batches = groupMode ? 1 : batch;
  const operand = (name: 'q' | 'k' | 'v', nhead: number, rows: number, hdim: number): void => {
    const op = args[name];
    if (typeof op !== 'object' || op === null) throw new ArgumentError(name, 'must be an operand { dtype, data, strides }', op);
    const want = op.dtype === 'fp32' ? Float32Array : op.dtype === 'fp16' || op.dtype === 'bf16' ? Uint16Array : undefined;
    if (want === undefined) throw new ArgumentError(`${name}.dtype`, 'must be fp16, bf16 or fp32', op.dtype);
    if (!(op.data instanceof want))
      throw new ArgumentError(`${name}.data`, `must be a ${want.name} for ${op.dtype}`, op.data?.constructor?.name);
    checkStrides(`${name}.strides`, op.strides, hdim, nhead);
    const span = attentionTensorSpan(op.strides, batches, nhead, rows, hdim);
    if (op.data.length < span)
      throw new ArgumentError(`${name}.data`, `must hold at least ${span} elements (its strides reach that far)`, op.data.length);
  };
  operand('q', nheadQ, rowsQ, hdimQ);
  operand('k', nheadK, rowsK, hdimQ);
  operand('v', nheadK, rowsK, hdimV);
  const oStrides = args.oStrides ?? packedAttentionStrides('bhsd', nheadQ, rowsQ, hdimV);
  checkStrides('oStrides', oStrides, hdimV, nheadQ);
  const scale = args.scale ?? 1 / Math.sqrt(hdimQ);
  if (typeof scale !== 'number' || !Number.isFinite(scale) || scale <= 0)
    throw new ArgumentError('scale', 'must be a finite number > 0', scale);
  const mask = checkAttentionMaskSpec(args.mask ?? noMask);
  return Object.freeze({
    batch,
    nheadQ,
    nheadK,
    hdimQ,
    hdimV,
    groupMode,
    seqlensQ,
    seqlensK,
    rowStartsQ,
    rowStartsK,
    rowsQ,
    scale,
    mask,
    scoreModifier: checkAttentionScoreModifier(args.scoreModifier, nheadQ),
    oStrides,
    oElements: attentionTensorSpan(oStrides, batches, nheadQ, rowsQ, hdimV),
  });
}

function checkStrides(where: string, s: AttentionTensorStrides, hdim: number, nhead: number): void {
  if (typeof s !== 'object' || s === null) throw new ArgumentError(where, 'must be { batch, head, row }', s);
  for (const key of ['batch', 'head', 'row'] as const) count(`${where}.${key}`, s[key]);
  if (s.row < hdim && s.head < hdim)
    throw new ArgumentError(where, `row or head stride must be at least hdim = ${hdim} (the head dim is contiguous)`, s);
  if (nhead < 1) throw new ArgumentError(where, 'needs at least one head', nhead);
}

/** Element offset of (batch b, head h, row r, dim 0). */
export function attentionRowOffset(
  a: ResolvedAttentionFwdArgs,
  strides: AttentionTensorStrides,
  rowStarts: readonly number[],
  b: number,
  h: number,
  r: number,
): number {
  return a.groupMode ? (rowStarts[b]! + r) * strides.row + h * strides.head : b * strides.batch + h * strides.head + r * strides.row;
}

/** LSE index of (b, h, r): [batch][nheadQ][seqlenQ] in batch mode, [nheadQ][total rows] in group mode. */
export function attentionLseIndex(a: ResolvedAttentionFwdArgs, b: number, h: number, r: number): number {
  return a.groupMode ? h * a.rowsQ + a.rowStartsQ[b]! + r : (b * a.nheadQ + h) * a.rowsQ + r;
}

const tables = new Map<AttentionStorageDType, Float64Array>();

/** A 2^16-entry value table of a 16-bit dtype (exact decodes from @tilekit/numeric). */
export function valueTable16(dtype: 'fp16' | 'bf16'): Float64Array {
  let t = tables.get(dtype);
  if (t === undefined) {
    t = new Float64Array(1 << 16);
    for (let bits = 0; bits < 1 << 16; bits++) t[bits] = decode(dtype, bits);
    tables.set(dtype, t);
  }
  return t;
}

/** The largest finite |value| stored in an operand's array (every element, a safe over-estimate of the tensor's; NaN and ±∞ are skipped). */
export function attentionOperandMaxAbs(op: AttentionOperand): number {
  // Non-finite elements are skipped: a tolerance derived from NaN would accept or reject everything.
  let best = 0;
  const take = (v: number): void => {
    if (Number.isFinite(v)) best = Math.max(best, Math.abs(v));
  };
  if (op.dtype === 'fp32') {
    for (const v of op.data) take(v);
    return best;
  }
  const table = valueTable16(op.dtype);
  for (const bits of op.data) take(table[bits]!);
  return best;
}
