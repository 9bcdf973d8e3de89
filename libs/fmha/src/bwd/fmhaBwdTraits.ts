import { ArgumentError, ArgumentProblems } from '@tilekit/numeric';
import type { AttentionMaskSpec } from '../mask/attentionMaskSpec.ts';
import {
  ATTENTION_MAX_BATCH,
  ATTENTION_MAX_HDIM,
  ATTENTION_MAX_HEADS,
  ATTENTION_MAX_SEQLEN,
  attentionProblemChecks,
  longestSlot,
} from '../problem/attentionProblemChecks.ts';

/** An FMHA backward trait broke a rule; `argument` is `traits.<field>`. */
export class FmhaBwdTraitsError extends ArgumentError {}

/** Element types of Q, K, V, O, dO and of dQ, dK, dV (fp32 accumulation). */
export const FMHA_BWD_DTYPES = ['fp16', 'bf16'] as const;
export type FmhaBwdDType = (typeof FMHA_BWD_DTYPES)[number];

/** CK's `bias_enum`: no bias, an elementwise bias tensor, or ALiBi slopes. */
export const FMHA_BWD_BIAS_KINDS = ['none', 'elementwise', 'alibi'] as const;
export type FmhaBwdBiasKind = (typeof FMHA_BWD_BIAS_KINDS)[number];

/** The largest sequence (and group-mode total) length: int32 index arithmetic in the kernels stays exact below it. */
export const FMHA_BWD_MAX_SEQLEN = ATTENTION_MAX_SEQLEN;
/** The largest batch and head counts (grid dimensions). */
export const FMHA_BWD_MAX_BATCH = ATTENTION_MAX_BATCH;
export const FMHA_BWD_MAX_HEADS = ATTENTION_MAX_HEADS;
/** The largest head dims a trait may name (instances decide what is supported). */
export const FMHA_BWD_MAX_HDIM = ATTENTION_MAX_HDIM;

/**
 * CK-tile's `fmha_bwd_traits` (unified-workspace revision): everything the launcher needs to pick
 * an instance triple and size the workspace, known before any device pointer exists.
 * - Batch mode: `seqlenQ`/`seqlenK` are the rows per sequence and `maxSeqlenQ`/`maxSeqlenK` equal them.
 * - Group (varlen) mode: `seqstartQ`/`seqstartK` are the cumulative PHYSICAL row starts (length
 *   batch + 1, from 0, padding included: seqstart[b + 1] − seqstart[b] is batch b's physical
 *   length); `seqlenQ`/`seqlenK` are the totals seqstart[batch]; `maxSeqlenQ`/`maxSeqlenK` the
 *   longest logical sequence (at most the longest physical slot).
 * The flags default to off (`mask` none, `bias` none).
 */
export interface FmhaBwdTraits {
  readonly seqlenQ: number;
  readonly seqlenK: number;
  readonly batch: number;
  readonly maxSeqlenQ: number;
  readonly maxSeqlenK: number;
  readonly hdimQ: number;
  readonly hdimV: number;
  readonly nheadQ: number;
  /** Must divide nheadQ (GQA/MQA when smaller). */
  readonly nheadK: number;
  readonly dtype: FmhaBwdDType;
  readonly groupMode: boolean;
  /** A spec or CK's `-mask=` string (`0`, `t`, `b`, `t:l,r`, `b:l,r`, `xt:w`, `g:y,x`). */
  readonly mask?: AttentionMaskSpec | string;
  readonly bias?: FmhaBwdBiasKind;
  /** Also produce dBias (elementwise bias only). */
  readonly hasDbias?: boolean;
  readonly hasDropout?: boolean;
  /** Store the dropout random values (dropout only). */
  readonly storeRandval?: boolean;
  /** dQ reduced in a fixed order (no atomics across key tiles): bitwise-reproducible runs. */
  readonly deterministic: boolean;
  /** Group mode only: cumulative physical query rows, length batch + 1. */
  readonly seqstartQ?: readonly number[];
  /** Group mode only: cumulative physical key rows, length batch + 1. */
  readonly seqstartK?: readonly number[];
}

/** Traits with every default filled in, validated and frozen (seqstarts empty in batch mode). */
export interface CheckedFmhaBwdTraits extends Required<Omit<FmhaBwdTraits, 'mask'>> {
  readonly mask: AttentionMaskSpec;
}

function fail(field: string, rule: string, found: unknown): never {
  throw new FmhaBwdTraitsError(`traits.${field}`, rule, found);
}

const checks = attentionProblemChecks(FmhaBwdTraitsError, 'traits');

function requireBoolean(field: string, v: unknown): boolean {
  if (typeof v !== 'boolean') fail(field, 'must be a boolean', v);
  return v;
}

/** The four sequence lengths of the traits, each undefined when it broke its range. */
interface TraitLengths {
  readonly seqlenQ: number | undefined;
  readonly seqlenK: number | undefined;
  readonly maxSeqlenQ: number | undefined;
  readonly maxSeqlenK: number | undefined;
}

/** The traits' seqstarts (empty in batch mode), every problem of the mode's rules reported to `v`. */
function traitSeqstarts(
  v: ArgumentProblems,
  t: FmhaBwdTraits,
  batch: number | undefined,
  lengths: TraitLengths,
): { q: readonly number[]; k: readonly number[] } | undefined {
  if (!t.groupMode) {
    if (t.seqstartQ !== undefined) v.report('traits.seqstartQ', 'is only for group mode', t.seqstartQ);
    if (t.seqstartK !== undefined) v.report('traits.seqstartK', 'is only for group mode', t.seqstartK);
    if (lengths.maxSeqlenQ !== undefined && lengths.seqlenQ !== undefined && lengths.maxSeqlenQ !== lengths.seqlenQ)
      v.report('traits.maxSeqlenQ', `must equal seqlenQ = ${lengths.seqlenQ} in batch mode`, lengths.maxSeqlenQ);
    if (lengths.maxSeqlenK !== undefined && lengths.seqlenK !== undefined && lengths.maxSeqlenK !== lengths.seqlenK)
      v.report('traits.maxSeqlenK', `must equal seqlenK = ${lengths.seqlenK} in batch mode`, lengths.maxSeqlenK);
    return { q: [], k: [] };
  }
  const q = groupStarts(v, 'Q', t.seqstartQ, batch, lengths.seqlenQ, lengths.maxSeqlenQ);
  const k = groupStarts(v, 'K', t.seqstartK, batch, lengths.seqlenK, lengths.maxSeqlenK);
  return q === undefined || k === undefined ? undefined : { q, k };
}

/** One side's group-mode starts and the total and longest length they imply. */
function groupStarts(
  v: ArgumentProblems,
  side: 'Q' | 'K',
  given: readonly number[] | undefined,
  batch: number | undefined,
  seqlen: number | undefined,
  maxSeqlen: number | undefined,
): readonly number[] | undefined {
  const what = side === 'Q' ? 'query' : 'key';
  if (given === undefined) {
    v.report(`traits.seqstart${side}`, `is required in group mode (cumulative physical ${what} rows, batch + 1 entries)`, given);
    return undefined;
  }
  // An invalid batch leaves the count unchecked; the other rules still hold.
  const starts = v.check(() => checks.seqstarts(`seqstart${side}`, given, batch));
  if (starts === undefined) return undefined;
  const last = starts.length - 1;
  if (seqlen !== undefined && seqlen !== starts[last])
    v.report(
      `traits.seqlen${side}`,
      `must be the total physical ${what} rows seqstart${side}[${last}] = ${starts[last]} in group mode`,
      seqlen,
    );
  const slot = longestSlot(starts);
  if (maxSeqlen !== undefined && maxSeqlen > slot)
    v.report(`traits.maxSeqlen${side}`, `must be at most the longest physical ${what} slot ${slot}`, maxSeqlen);
  return starts;
}

/** bias, hasDbias, hasDropout, storeRandval with their defaults and the rules between them. */
function traitOptions(
  v: ArgumentProblems,
  t: FmhaBwdTraits,
): {
  bias: FmhaBwdBiasKind | undefined;
  hasDbias: boolean | undefined;
  hasDropout: boolean | undefined;
  storeRandval: boolean | undefined;
} {
  const bias = v.check(() => checks.oneOf('bias', t.bias ?? 'none', FMHA_BWD_BIAS_KINDS));
  const hasDbias = v.check(() => checks.flag('hasDbias', t.hasDbias, false));
  const hasDropout = v.check(() => checks.flag('hasDropout', t.hasDropout, false));
  const storeRandval = v.check(() => checks.flag('storeRandval', t.storeRandval, false));
  if (hasDbias === true && bias !== undefined && bias !== 'elementwise')
    v.report('traits.hasDbias', 'needs bias = elementwise (dBias is the gradient of a bias tensor)', bias);
  if (storeRandval === true && hasDropout === false)
    v.report('traits.storeRandval', 'needs hasDropout (there are no random values without dropout)', storeRandval);
  return { bias, hasDbias, hasDropout, storeRandval };
}

/**
 * Validates backward traits and returns them with defaults, frozen. Rules (every violation found
 * is reported in one `FmhaBwdTraitsError` naming `traits.<field>`, the first one's as `argument`):
 * dtype fp16 | bf16; batch, nheadQ, nheadK in [1, 65535] with nheadQ % nheadK = 0; hdimQ, hdimV in
 * [1, 1024]; groupMode and deterministic booleans; batch mode: seqlens in [0, 2^30], maxSeqlenQ =
 * seqlenQ, maxSeqlenK = seqlenK, no seqstart arrays; group mode: seqstartQ and seqstartK with
 * batch + 1 entries from 0, non-decreasing, seqlenQ = seqstartQ[batch], seqlenK =
 * seqstartK[batch], maxSeqlenQ/K in [0, longest physical slot]; a valid mask (spec or CK string);
 * bias none | elementwise | alibi; hasDbias only with an elementwise bias; storeRandval only with
 * dropout. Rules that compare fields are checked once those fields are valid.
 */
export function checkFmhaBwdTraits(traits: FmhaBwdTraits): CheckedFmhaBwdTraits {
  if (typeof traits !== 'object' || traits === null) throw new FmhaBwdTraitsError('traits', 'must be an object', traits);
  const t = traits;
  const v = new ArgumentProblems(FmhaBwdTraitsError);
  const dtype = v.check(() => checks.oneOf('dtype', t.dtype, FMHA_BWD_DTYPES));
  const heads = v.check(() => checks.heads(t, false));
  const hdimQ = v.check(() => checks.integer('hdimQ', t.hdimQ, 1, FMHA_BWD_MAX_HDIM));
  const hdimV = v.check(() => checks.integer('hdimV', t.hdimV, 1, FMHA_BWD_MAX_HDIM));
  const groupMode = v.check(() => requireBoolean('groupMode', t.groupMode));
  const deterministic = v.check(() => requireBoolean('deterministic', t.deterministic));
  const length = (field: 'seqlenQ' | 'seqlenK' | 'maxSeqlenQ' | 'maxSeqlenK') =>
    v.check(() => checks.integer(field, t[field], 0, FMHA_BWD_MAX_SEQLEN));
  const lengths: TraitLengths = {
    seqlenQ: length('seqlenQ'),
    seqlenK: length('seqlenK'),
    maxSeqlenQ: length('maxSeqlenQ'),
    maxSeqlenK: length('maxSeqlenK'),
  };
  const starts = groupMode === undefined ? undefined : traitSeqstarts(v, { ...t, groupMode }, heads?.batch, lengths);
  const mask = v.check(() => checks.mask(t.mask));
  const options = traitOptions(v, t);
  v.throwIfAny();
  return Object.freeze({
    seqlenQ: lengths.seqlenQ!,
    seqlenK: lengths.seqlenK!,
    batch: heads!.batch,
    maxSeqlenQ: lengths.maxSeqlenQ!,
    maxSeqlenK: lengths.maxSeqlenK!,
    hdimQ: hdimQ!,
    hdimV: hdimV!,
    nheadQ: heads!.nheadQ,
    nheadK: heads!.nheadK,
    dtype: dtype!,
    groupMode: groupMode!,
    mask: mask!,
    bias: options.bias!,
    hasDbias: options.hasDbias!,
    hasDropout: options.hasDropout!,
    storeRandval: options.storeRandval!,
    deterministic: deterministic!,
    seqstartQ: Object.freeze([...starts!.q]),
    seqstartK: Object.freeze([...starts!.k]),
  });
}

/**
 * Per batch: physical query rows sq_b and key rows sk_b (batch mode: seqlenQ/seqlenK for every
 * batch; group mode: the seqstart differences, padding included).
 */
export function fmhaBwdPhysicalSeqlens(t: CheckedFmhaBwdTraits): { readonly q: readonly number[]; readonly k: readonly number[] } {
  if (!t.groupMode) return { q: Array<number>(t.batch).fill(t.seqlenQ), k: Array<number>(t.batch).fill(t.seqlenK) };
  const diff = (s: readonly number[]): number[] => s.slice(1).map((e, b) => e - s[b]!);
  return { q: diff(t.seqstartQ), k: diff(t.seqstartK) };
}
