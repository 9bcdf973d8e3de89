// The field checks every attention problem (forward, backward) and the backward's traits share:
// integers in range, seqstart arrays, layouts, strides without overlap, masks, the fp32 scale and
// batch/group sequences. Each operator binds them to its own typed error and argument prefix, so
// the rules and messages are written once.
import { AttentionMaskError, checkAttentionMaskSpec, noMask, parseAttentionMaskSpec, type AttentionMaskSpec } from '../mask/attentionMaskSpec.ts';
import { ATTENTION_LAYOUTS, packedAttentionStrides, type AttentionLayout, type AttentionTensorStrides } from '../reference/attentionTensorLayout.ts';
import type { AttentionProblemMode } from './checkedAttentionProblem.ts';

/** The largest sequence (and group-mode total) length: the kernels' int32 index arithmetic stays exact below it. */
export const ATTENTION_MAX_SEQLEN = 2 ** 30;
/** The largest batch and head counts (grid dimensions). */
export const ATTENTION_MAX_BATCH = 65535;
export const ATTENTION_MAX_HEADS = 65535;
/** The largest head dims a problem may name (instances decide what is supported). */
export const ATTENTION_MAX_HDIM = 1024;

/** Throws the caller's typed error for `field` (the caller adds its prefix, e.g. `problem.`). */
export type AttentionFieldFailure = (field: string, rule: string, found: unknown) => never;

/** The sequence fields of a problem: batch mode `seqlenQ`/`seqlenK`, group mode `seqstartQ`/`seqstartK` (and optionally per-batch `seqlenK`). */
export interface AttentionSequenceFields {
  readonly seqlenQ?: number;
  readonly seqlenK?: number | readonly number[];
  readonly seqstartQ?: readonly number[];
  readonly seqstartK?: readonly number[];
}

/** Resolved sequences: the mode, the longest sequences, the rows per head in the tensors and (group mode) the starts. */
export interface AttentionSequences {
  readonly mode: AttentionProblemMode;
  /** Batch mode: rows per sequence; group mode: the longest query slot. */
  readonly seqlenQ: number;
  /** Batch mode: keys per sequence; group mode: the longest key sequence used. */
  readonly seqlenK: number;
  /** Batch mode the seqlens, group mode the totals seqstart[batch]. */
  readonly rowsQ: number;
  readonly rowsK: number;
  /** Group mode only (else empty). */
  readonly seqstartQ: readonly number[];
  readonly seqstartK: readonly number[];
  /** Group mode only (else empty): keys used per batch (the slot, or the given per-batch seqlenK). */
  readonly seqlensK: readonly number[];
  /** Whether per-batch seqlenK was given in group mode. */
  readonly hasSeqlenK: boolean;
}

/** The shared checks, bound to one operator's failure (see `attentionProblemChecks`). */
export interface AttentionProblemChecks {
  /** An integer in [min, max]. */
  integer(field: string, v: unknown, min: number, max: number): number;
  /** A boolean, `fallback` when undefined. */
  flag(field: string, v: unknown, fallback: boolean): boolean;
  /** One of `allowed` (`must be one of a, b`). */
  oneOf<T>(field: string, v: unknown, allowed: readonly T[]): T;
  /** batch, nheadQ, nheadK in [1, 65535] with nheadQ % nheadK = 0; nheadK defaults to nheadQ only when `nheadKDefaultsToNheadQ`. */
  heads(p: { readonly batch: unknown; readonly nheadQ: unknown; readonly nheadK?: unknown }, nheadKDefaultsToNheadQ: boolean): { readonly batch: number; readonly nheadQ: number; readonly nheadK: number };
  /** batch + 1 integers in [0, 2^30] from 0, non-decreasing. */
  seqstarts(field: string, s: unknown, batch: number): number[];
  /** Batch or group sequences of a problem; `perBatchSeqlenK` allows an array seqlenK in group mode (else it must be omitted there). */
  sequences(p: AttentionSequenceFields, batch: number, perBatchSeqlenK: boolean): AttentionSequences;
  /** bhsd | bshd, default bhsd. */
  layout(field: string, v: unknown): AttentionLayout;
  /**
   * Explicit strides keep the layout's order with no overlap: each dimension's stride at least the
   * packed extent of the dimensions inside it (bhsd: row ≥ hdim, head ≥ rows·row, batch ≥
   * nhead·head; bshd: head ≥ hdim, row ≥ nhead·head, batch ≥ rows·row); batch 0 in group mode.
   * Undefined gives the packed strides.
   */
  strides(field: string, given: AttentionTensorStrides | undefined, layout: AttentionLayout, nhead: number, rows: number, hdim: number, group: boolean): AttentionTensorStrides;
  /** A spec or CK's `-mask=` string (field `mask`), default none. */
  mask(given: AttentionMaskSpec | string | undefined): AttentionMaskSpec;
  /** Finite > 0 (default 1/√hdimQ), rounded to fp32 and still > 0 there. */
  scale(given: unknown, hdimQ: number): number;
}

/** Longest slot of cumulative starts: max over b of s[b + 1] − s[b] (0 without batches). */
export function longestSlot(starts: readonly number[]): number {
  let best = 0;
  for (let b = 0; b + 1 < starts.length; b++) best = Math.max(best, starts[b + 1]! - starts[b]!);
  return best;
}

/**
 * The shared attention field checks, each violation reported through `fail(field, rule, found)`
 * (which throws the operator's typed error naming `<prefix>.<field>`).
 */
export function attentionProblemChecks(fail: AttentionFieldFailure): AttentionProblemChecks {
  const integer = (field: string, v: unknown, min: number, max: number): number => {
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min || v > max) fail(field, `must be an integer in [${min}, ${max}]`, v);
    return v;
  };
  const oneOf = <T>(field: string, v: unknown, allowed: readonly T[]): T => {
    if (!(allowed as readonly unknown[]).includes(v)) fail(field, `must be one of ${allowed.join(', ')}`, v);
    return v as T;
  };
  const seqstarts = (field: string, s: unknown, batch: number): number[] => {
    if (!Array.isArray(s) || s.length !== batch + 1) fail(field, `must be an array of batch + 1 = ${batch + 1} integers`, s);
    const out = (s as unknown[]).map((v, i) => integer(`${field}[${i}]`, v, 0, ATTENTION_MAX_SEQLEN));
    if (out[0] !== 0) fail(`${field}[0]`, 'must be 0', out[0]);
    for (let i = 1; i < out.length; i++) if (out[i]! < out[i - 1]!) fail(field, `must be non-decreasing, but [${i}] = ${out[i]} < [${i - 1}] = ${out[i - 1]}`, s);
    return out;
  };
  const sequences = (p: AttentionSequenceFields, batch: number, perBatchSeqlenK: boolean): AttentionSequences => {
    if (p.seqstartQ === undefined && p.seqstartK === undefined) {
      const seqlenQ = integer('seqlenQ', p.seqlenQ, 0, ATTENTION_MAX_SEQLEN);
      if (perBatchSeqlenK && Array.isArray(p.seqlenK)) fail('seqlenK', 'must be a number in batch mode (per-batch keys need group mode)', p.seqlenK);
      const seqlenK = integer('seqlenK', p.seqlenK ?? seqlenQ, 0, ATTENTION_MAX_SEQLEN);
      return Object.freeze({ mode: 'batch', seqlenQ, seqlenK, rowsQ: seqlenQ, rowsK: seqlenK, seqstartQ: [], seqstartK: [], seqlensK: [], hasSeqlenK: false });
    }
    if (p.seqlenQ !== undefined) fail('seqlenQ', 'must be omitted in group mode (seqstartQ gives the query sequences)', p.seqlenQ);
    if (!perBatchSeqlenK && p.seqlenK !== undefined) fail('seqlenK', 'must be omitted in group mode (seqstartK gives the key sequences)', p.seqlenK);
    if (p.seqstartQ === undefined) fail('seqstartQ', 'is required in group mode (with seqstartK)', p.seqstartQ);
    if (p.seqstartK === undefined) fail('seqstartK', 'is required in group mode (with seqstartQ)', p.seqstartK);
    const seqstartQ = Object.freeze(seqstarts('seqstartQ', p.seqstartQ, batch));
    const seqstartK = Object.freeze(seqstarts('seqstartK', p.seqstartK, batch));
    const slots = seqstartK.slice(1).map((e, b) => e - seqstartK[b]!);
    let seqlensK = slots;
    if (p.seqlenK !== undefined) {
      if (!Array.isArray(p.seqlenK) || p.seqlenK.length !== batch) fail('seqlenK', `in group mode must be an array of batch = ${batch} integers`, p.seqlenK);
      seqlensK = (p.seqlenK as readonly unknown[]).map((v, b) => {
        const n = integer(`seqlenK[${b}]`, v, 0, ATTENTION_MAX_SEQLEN);
        if (n > slots[b]!) fail(`seqlenK[${b}]`, `must be at most seqstartK[${b + 1}] − seqstartK[${b}] = ${slots[b]}`, n);
        return n;
      });
    }
    return Object.freeze({
      mode: 'group',
      seqlenQ: longestSlot(seqstartQ),
      seqlenK: Math.max(0, ...seqlensK),
      rowsQ: seqstartQ[batch]!,
      rowsK: seqstartK[batch]!,
      seqstartQ,
      seqstartK,
      seqlensK: Object.freeze(seqlensK),
      hasSeqlenK: p.seqlenK !== undefined,
    });
  };
  const strides = (field: string, given: AttentionTensorStrides | undefined, layout: AttentionLayout, nhead: number, rows: number, hdim: number, group: boolean): AttentionTensorStrides => {
    if (given === undefined) {
      const packed = packedAttentionStrides(layout, nhead, rows, hdim);
      return Object.freeze({ ...packed, batch: group ? 0 : packed.batch });
    }
    if (typeof given !== 'object' || given === null) fail(field, 'must be { batch, head, row } element strides', given);
    const head = integer(`${field}.head`, given.head, 0, Number.MAX_SAFE_INTEGER);
    const row = integer(`${field}.row`, given.row, 0, Number.MAX_SAFE_INTEGER);
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
    if (batch < inner) fail(`${field}.batch`, `must be at least ${layout === 'bhsd' ? 'nhead·head' : 'rows·row'} = ${inner} (${layout}: no overlap between batches)`, batch);
    return Object.freeze({ batch, head, row });
  };
  return Object.freeze({
    integer,
    oneOf,
    seqstarts,
    sequences,
    strides,
    flag(field: string, v: unknown, fallback: boolean): boolean {
      const b = v ?? fallback;
      if (typeof b !== 'boolean') fail(field, 'must be a boolean', v);
      return b;
    },
    heads(p: { readonly batch: unknown; readonly nheadQ: unknown; readonly nheadK?: unknown }, nheadKDefaultsToNheadQ: boolean) {
      const batch = integer('batch', p.batch, 1, ATTENTION_MAX_BATCH);
      const nheadQ = integer('nheadQ', p.nheadQ, 1, ATTENTION_MAX_HEADS);
      const nheadK = integer('nheadK', nheadKDefaultsToNheadQ ? (p.nheadK ?? nheadQ) : p.nheadK, 1, ATTENTION_MAX_HEADS);
      if (nheadQ % nheadK !== 0) fail('nheadK', `must divide nheadQ = ${nheadQ} (GQA/MQA: nheadQ % nheadK == 0)`, nheadK);
      return { batch, nheadQ, nheadK };
    },
    layout(field: string, v: unknown): AttentionLayout {
      return oneOf(field, v ?? 'bhsd', ATTENTION_LAYOUTS);
    },
    mask(given: AttentionMaskSpec | string | undefined): AttentionMaskSpec {
      try {
        if (given === undefined) return noMask;
        return typeof given === 'string' ? parseAttentionMaskSpec(given) : checkAttentionMaskSpec(given, 'mask');
      } catch (e) {
        if (e instanceof AttentionMaskError) fail('mask', `must be a valid mask (${e.message})`, given);
        throw e;
      }
    },
    scale(given: unknown, hdimQ: number): number {
      const scaleIn = given ?? 1 / Math.sqrt(hdimQ);
      if (typeof scaleIn !== 'number' || !Number.isFinite(scaleIn) || scaleIn <= 0) fail('scale', 'must be a finite number > 0', scaleIn);
      const scale = Math.fround(scaleIn);
      if (!Number.isFinite(scale) || scale <= 0) fail('scale', 'must be a positive number representable in fp32', scaleIn);
      return scale;
    },
  });
}
