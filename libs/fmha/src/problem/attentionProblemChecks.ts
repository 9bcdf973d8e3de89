// The field checks every attention problem (forward, backward) and the backward's traits share:
// integers in range, seqstart arrays, layouts, strides without overlap, masks, the fp32 scale and
// batch/group sequences. Each operator binds them to its own typed error and argument prefix, so
// the rules and messages are written once. The compound checks (heads, sequences, seqstarts,
// strides) report every independent problem they find in one error (see `ArgumentProblems`).
import { ArgumentProblems, type ArgumentErrorClass } from '@tilekit/numeric';
import {
  AttentionMaskError,
  checkAttentionMaskSpec,
  noMask,
  parseAttentionMaskSpec,
  type AttentionMaskSpec,
} from '../mask/attentionMaskSpec.ts';
import {
  ATTENTION_LAYOUTS,
  packedAttentionStrides,
  type AttentionLayout,
  type AttentionTensorStrides,
} from '../reference/attentionTensorLayout.ts';
import type { AttentionProblemMode } from './checkedAttentionProblem.ts';

/** The largest sequence (and group-mode total) length: the kernels' int32 index arithmetic stays exact below it. */
export const ATTENTION_MAX_SEQLEN = 2 ** 30;
/** The largest batch and head counts (grid dimensions). */
export const ATTENTION_MAX_BATCH = 65535;
export const ATTENTION_MAX_HEADS = 65535;
/** The largest head dims a problem may name (instances decide what is supported). */
export const ATTENTION_MAX_HDIM = 1024;

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
  /**
   * batch, nheadQ, nheadK in [1, 65535] with nheadQ % nheadK = 0; nheadK defaults to nheadQ only
   * when `nheadKDefaultsToNheadQ`. Every broken range is reported; the divisibility once both are valid.
   */
  heads(
    p: { readonly batch: unknown; readonly nheadQ: unknown; readonly nheadK?: unknown },
    nheadKDefaultsToNheadQ: boolean,
  ): { readonly batch: number; readonly nheadQ: number; readonly nheadK: number };
  /**
   * batch + 1 integers in [0, 2^30] from 0, non-decreasing. Reports every entry out of range, else
   * a non-zero start, else every decrease. `batch` undefined (the caller found it invalid): any
   * count, every other rule checked.
   */
  seqstarts(field: string, s: unknown, batch: number | undefined): number[];
  /**
   * Batch or group sequences of a problem; `perBatchSeqlenK` allows an array seqlenK in group mode
   * (else it must be omitted there). `batch` is the checked batch, or undefined when the caller
   * found it invalid: group-mode starts then take their count from seqstartQ, so their other rules
   * are still checked. Every independent field's problem is reported.
   */
  sequences(p: AttentionSequenceFields, batch: number | undefined, perBatchSeqlenK: boolean): AttentionSequences;
  /** bhsd | bshd, default bhsd. */
  layout(field: string, v: unknown): AttentionLayout;
  /**
   * Explicit strides keep the layout's order with no overlap: each dimension's stride at least the
   * packed extent of the dimensions inside it (bhsd: row ≥ hdim, head ≥ rows·row, batch ≥
   * nhead·head; bshd: head ≥ hdim, row ≥ nhead·head, batch ≥ rows·row); batch 0 in group mode.
   * Undefined gives the packed strides. Every broken rule is reported (a cross-check once the
   * strides it compares are integers).
   */
  strides(
    field: string,
    given: AttentionTensorStrides | undefined,
    layout: AttentionLayout,
    nhead: number,
    rows: number,
    hdim: number,
    group: boolean,
  ): AttentionTensorStrides;
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

/** How the checks fail: one problem thrown at once, or several collected, as the operator's error. */
interface Failures {
  /** `<prefix>.<field>`, the argument a problem names. */
  name(field: string): string;
  /** Throws the operator's error for one field. */
  fail(field: string, rule: string, found: unknown): never;
  /** A collector that throws the operator's error. */
  collect(): ArgumentProblems;
}

/**
 * The shared attention field checks, bound to an operator: each violation is an `errorClass` error
 * naming `<prefix>.<field>` (e.g. `problem.nheadK`), several found together one error listing them.
 */
export function attentionProblemChecks(errorClass: ArgumentErrorClass, prefix: string): AttentionProblemChecks {
  const f: Failures = {
    name: (field) => `${prefix}.${field}`,
    fail: (field, rule, found) => {
      throw new errorClass([{ argument: `${prefix}.${field}`, rule, found }]);
    },
    collect: () => new ArgumentProblems(errorClass),
  };
  return Object.freeze({
    integer: (field: string, v: unknown, min: number, max: number) => checkInteger(f, field, v, min, max),
    oneOf: <T>(field: string, v: unknown, allowed: readonly T[]) => checkOneOf(f, field, v, allowed),
    seqstarts: (field: string, s: unknown, batch: number | undefined) => checkSeqstarts(f, field, s, batch),
    sequences: (p: AttentionSequenceFields, batch: number | undefined, perBatchSeqlenK: boolean) =>
      p.seqstartQ === undefined && p.seqstartK === undefined
        ? batchSequences(f, p, perBatchSeqlenK)
        : groupSequences(f, p, batch, perBatchSeqlenK),
    strides: (
      field: string,
      given: AttentionTensorStrides | undefined,
      layout: AttentionLayout,
      nhead: number,
      rows: number,
      hdim: number,
      group: boolean,
    ) => checkStrides(f, { field, given, layout, nhead, rows, hdim, group }),
    flag: (field: string, v: unknown, fallback: boolean) => checkFlag(f, field, v, fallback),
    heads: (p: { readonly batch: unknown; readonly nheadQ: unknown; readonly nheadK?: unknown }, nheadKDefaultsToNheadQ: boolean) =>
      checkHeads(f, p, nheadKDefaultsToNheadQ),
    layout: (field: string, v: unknown) => checkOneOf(f, field, v ?? 'bhsd', ATTENTION_LAYOUTS),
    mask: (given: AttentionMaskSpec | string | undefined) => checkMask(f, given),
    scale: (given: unknown, hdimQ: number) => checkScale(f, given, hdimQ),
  });
}

function checkInteger(f: Failures, field: string, v: unknown, min: number, max: number): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min || v > max) f.fail(field, `must be an integer in [${min}, ${max}]`, v);
  return v;
}

function checkOneOf<T>(f: Failures, field: string, v: unknown, allowed: readonly T[]): T {
  if (!(allowed as readonly unknown[]).includes(v)) f.fail(field, `must be one of ${allowed.join(', ')}`, v);
  return v as T;
}

function checkFlag(f: Failures, field: string, v: unknown, fallback: boolean): boolean {
  const b = v ?? fallback;
  if (typeof b !== 'boolean') f.fail(field, 'must be a boolean', v);
  return b;
}

function checkHeads(
  f: Failures,
  p: { readonly batch: unknown; readonly nheadQ: unknown; readonly nheadK?: unknown },
  nheadKDefaultsToNheadQ: boolean,
): { readonly batch: number; readonly nheadQ: number; readonly nheadK: number } {
  const v = f.collect();
  const batch = v.check(() => checkInteger(f, 'batch', p.batch, 1, ATTENTION_MAX_BATCH));
  const nheadQ = v.check(() => checkInteger(f, 'nheadQ', p.nheadQ, 1, ATTENTION_MAX_HEADS));
  const nheadK =
    nheadKDefaultsToNheadQ && p.nheadK === undefined ? nheadQ : v.check(() => checkInteger(f, 'nheadK', p.nheadK, 1, ATTENTION_MAX_HEADS));
  if (nheadQ !== undefined && nheadK !== undefined && nheadQ % nheadK !== 0)
    v.report(f.name('nheadK'), `must divide nheadQ = ${nheadQ} (GQA/MQA: nheadQ % nheadK == 0)`, nheadK);
  v.throwIfAny();
  return { batch: batch!, nheadQ: nheadQ!, nheadK: nheadK! };
}

function checkSeqstarts(f: Failures, field: string, s: unknown, batch: number | undefined): number[] {
  if (!Array.isArray(s) || (batch !== undefined && s.length !== batch + 1)) {
    f.fail(
      field,
      batch === undefined ? 'must be an array of batch + 1 integers' : `must be an array of batch + 1 = ${batch + 1} integers`,
      s,
    );
  }
  const v = f.collect();
  const out = (s as unknown[]).map((x, i) => v.check(() => checkInteger(f, `${field}[${i}]`, x, 0, ATTENTION_MAX_SEQLEN)));
  v.throwIfAny();
  const starts = out as number[];
  if (starts[0] !== 0) f.fail(`${field}[0]`, 'must be 0', starts[0]);
  for (let i = 1; i < starts.length; i++) {
    if (starts[i]! < starts[i - 1]!)
      v.report(f.name(field), `must be non-decreasing, but [${i}] = ${starts[i]} < [${i - 1}] = ${starts[i - 1]}`, s);
  }
  v.throwIfAny();
  return starts;
}

function batchSequences(f: Failures, p: AttentionSequenceFields, perBatchSeqlenK: boolean): AttentionSequences {
  const v = f.collect();
  const seqlenQ = v.check(() => checkInteger(f, 'seqlenQ', p.seqlenQ, 0, ATTENTION_MAX_SEQLEN));
  let seqlenK = seqlenQ;
  if (p.seqlenK !== undefined) {
    seqlenK = v.check(() => {
      if (perBatchSeqlenK && Array.isArray(p.seqlenK))
        f.fail('seqlenK', 'must be a number in batch mode (per-batch keys need group mode)', p.seqlenK);
      return checkInteger(f, 'seqlenK', p.seqlenK, 0, ATTENTION_MAX_SEQLEN);
    });
  }
  v.throwIfAny();
  return Object.freeze({
    mode: 'batch',
    seqlenQ: seqlenQ!,
    seqlenK: seqlenK!,
    rowsQ: seqlenQ!,
    rowsK: seqlenK!,
    seqstartQ: [],
    seqstartK: [],
    seqlensK: [],
    hasSeqlenK: false,
  });
}

function groupSequences(f: Failures, p: AttentionSequenceFields, batch: number | undefined, perBatchSeqlenK: boolean): AttentionSequences {
  const v = f.collect();
  if (p.seqlenQ !== undefined)
    v.report(f.name('seqlenQ'), 'must be omitted in group mode (seqstartQ gives the query sequences)', p.seqlenQ);
  if (!perBatchSeqlenK && p.seqlenK !== undefined)
    v.report(f.name('seqlenK'), 'must be omitted in group mode (seqstartK gives the key sequences)', p.seqlenK);
  const starts = (field: 'seqstartQ' | 'seqstartK', other: string): readonly number[] | undefined => {
    if (p[field] === undefined) {
      v.report(f.name(field), `is required in group mode (with ${other})`, undefined);
      return undefined;
    }
    return v.check(() => Object.freeze(checkSeqstarts(f, field, p[field], batch)));
  };
  const seqstartQ = starts('seqstartQ', 'seqstartK');
  const seqstartK = starts('seqstartK', 'seqstartQ');
  const seqlensK = seqstartK !== undefined && perBatchSeqlenK ? v.check(() => keysUsed(f, p.seqlenK, seqstartK)) : undefined;
  v.throwIfAny();
  const used = seqlensK ?? seqstartK!.slice(1).map((e, b) => e - seqstartK![b]!);
  return Object.freeze({
    mode: 'group',
    seqlenQ: longestSlot(seqstartQ!),
    seqlenK: Math.max(0, ...used),
    rowsQ: seqstartQ!.at(-1)!,
    rowsK: seqstartK!.at(-1)!,
    seqstartQ: seqstartQ!,
    seqstartK: seqstartK!,
    seqlensK: Object.freeze(used),
    hasSeqlenK: p.seqlenK !== undefined,
  });
}

/** Group mode: the keys used per batch, the slots or the given per-batch seqlenK (each at most its slot). */
function keysUsed(f: Failures, seqlenK: AttentionSequenceFields['seqlenK'], seqstartK: readonly number[]): number[] {
  const batch = seqstartK.length - 1;
  const slots = seqstartK.slice(1).map((e, b) => e - seqstartK[b]!);
  if (seqlenK === undefined) return slots;
  if (!Array.isArray(seqlenK) || seqlenK.length !== batch)
    f.fail('seqlenK', `in group mode must be an array of batch = ${batch} integers`, seqlenK);
  const v = f.collect();
  const out = (seqlenK as readonly unknown[]).map((x, b) =>
    v.check(() => {
      const n = checkInteger(f, `seqlenK[${b}]`, x, 0, ATTENTION_MAX_SEQLEN);
      if (n > slots[b]!) f.fail(`seqlenK[${b}]`, `must be at most seqstartK[${b + 1}] − seqstartK[${b}] = ${slots[b]}`, n);
      return n;
    }),
  );
  v.throwIfAny();
  return out as number[];
}

/** The arguments of one strides check. */
interface StridesCheck {
  readonly field: string;
  readonly given: AttentionTensorStrides | undefined;
  readonly layout: AttentionLayout;
  readonly nhead: number;
  readonly rows: number;
  readonly hdim: number;
  readonly group: boolean;
}

function checkStrides(f: Failures, c: StridesCheck): AttentionTensorStrides {
  const { field, given, layout, group } = c;
  if (given === undefined) {
    const packed = packedAttentionStrides(layout, c.nhead, c.rows, c.hdim);
    return Object.freeze({ ...packed, batch: group ? 0 : packed.batch });
  }
  if (typeof given !== 'object' || given === null) f.fail(field, 'must be { batch, head, row } element strides', given);
  const v = f.collect();
  const head = v.check(() => checkInteger(f, `${field}.head`, given.head, 0, Number.MAX_SAFE_INTEGER));
  const row = v.check(() => checkInteger(f, `${field}.row`, given.row, 0, Number.MAX_SAFE_INTEGER));
  for (const [which, rule, found] of innerStrideProblems(c, head, row)) v.report(f.name(`${field}.${which}`), rule, found);
  let batch = 0;
  if (group) {
    if (given.batch !== undefined && given.batch !== 0)
      v.report(f.name(`${field}.batch`), 'must be 0 in group mode (batches are found through seqstart)', given.batch);
  } else {
    const b = v.check(() => checkInteger(f, `${field}.batch`, given.batch, 0, Number.MAX_SAFE_INTEGER));
    const inner = head === undefined || row === undefined ? undefined : layout === 'bhsd' ? c.nhead * head : c.rows * row;
    if (b !== undefined && inner !== undefined && b < inner)
      v.report(
        f.name(`${field}.batch`),
        `must be at least ${layout === 'bhsd' ? 'nhead·head' : 'rows·row'} = ${inner} (${layout}: no overlap between batches)`,
        b,
      );
    batch = b ?? 0;
  }
  v.throwIfAny();
  return Object.freeze({ batch, head: head!, row: row! });
}

/** The head and row strides' no-overlap rules of a layout that (head, row) break; a rule needs the strides it compares to be integers. */
function innerStrideProblems(
  c: StridesCheck,
  head: number | undefined,
  row: number | undefined,
): [which: 'head' | 'row', rule: string, found: number][] {
  const { rows, nhead, hdim } = c;
  const out: [which: 'head' | 'row', rule: string, found: number][] = [];
  if (c.layout === 'bhsd') {
    if (row !== undefined && row < hdim)
      out.push(['row', `must be at least hdim = ${hdim} (bhsd: the head dim is contiguous inside a row)`, row]);
    if (head !== undefined && row !== undefined && head < rows * row)
      out.push(['head', `must be at least rows·row = ${rows}·${row} = ${rows * row} (bhsd)`, head]);
  } else {
    if (head !== undefined && head < hdim)
      out.push(['head', `must be at least hdim = ${hdim} (bshd: the head dim is contiguous inside a head)`, head]);
    if (head !== undefined && row !== undefined && row < nhead * head)
      out.push(['row', `must be at least nhead·head = ${nhead}·${head} = ${nhead * head} (bshd)`, row]);
  }
  return out;
}

function checkMask(f: Failures, given: AttentionMaskSpec | string | undefined): AttentionMaskSpec {
  try {
    if (given === undefined) return noMask;
    return typeof given === 'string' ? parseAttentionMaskSpec(given) : checkAttentionMaskSpec(given, 'mask');
  } catch (e) {
    if (e instanceof AttentionMaskError) f.fail('mask', `must be a valid mask (${e.message})`, given);
    throw e;
  }
}

function checkScale(f: Failures, given: unknown, hdimQ: number): number {
  const scaleIn = given ?? 1 / Math.sqrt(hdimQ);
  if (typeof scaleIn !== 'number' || !Number.isFinite(scaleIn) || scaleIn <= 0) f.fail('scale', 'must be a finite number > 0', scaleIn);
  const scale = Math.fround(scaleIn);
  if (!Number.isFinite(scale) || scale <= 0) f.fail('scale', 'must be a positive number representable in fp32', scaleIn);
  return scale;
}
