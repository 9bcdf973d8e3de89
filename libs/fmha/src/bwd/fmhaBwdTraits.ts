import { ArgumentError } from '@tilekit/numeric';
import type { AttentionMaskSpec } from '../mask/attentionMaskSpec.ts';
import { ATTENTION_MAX_BATCH, ATTENTION_MAX_HDIM, ATTENTION_MAX_HEADS, ATTENTION_MAX_SEQLEN, attentionProblemChecks, longestSlot } from '../problem/attentionProblemChecks.ts';

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

const checks = attentionProblemChecks(fail);

/**
 * Validates backward traits and returns them with defaults, frozen. Rules (each violation throws
 * `FmhaBwdTraitsError` naming `traits.<field>`): dtype fp16 | bf16; batch, nheadQ, nheadK in
 * [1, 65535] with nheadQ % nheadK = 0; hdimQ, hdimV in [1, 1024]; groupMode and deterministic
 * booleans; batch mode: seqlens in [0, 2^30], maxSeqlenQ = seqlenQ, maxSeqlenK = seqlenK, no
 * seqstart arrays; group mode: seqstartQ and seqstartK with batch + 1 entries from 0,
 * non-decreasing, seqlenQ = seqstartQ[batch], seqlenK = seqstartK[batch], maxSeqlenQ/K in
 * [0, longest physical slot]; a valid mask (spec or CK string); bias none | elementwise | alibi;
 * hasDbias only with an elementwise bias; storeRandval only with dropout.
 */
export function checkFmhaBwdTraits(traits: FmhaBwdTraits): CheckedFmhaBwdTraits {
  if (typeof traits !== 'object' || traits === null) throw new FmhaBwdTraitsError('traits', 'must be an object', traits);
  const t = traits;
  const dtype = checks.oneOf('dtype', t.dtype, FMHA_BWD_DTYPES);
  const { batch, nheadQ, nheadK } = checks.heads(t, false);
  const hdimQ = checks.integer('hdimQ', t.hdimQ, 1, FMHA_BWD_MAX_HDIM);
  const hdimV = checks.integer('hdimV', t.hdimV, 1, FMHA_BWD_MAX_HDIM);
  if (typeof t.groupMode !== 'boolean') fail('groupMode', 'must be a boolean', t.groupMode);
  if (typeof t.deterministic !== 'boolean') fail('deterministic', 'must be a boolean', t.deterministic);
  const seqlenQ = checks.integer('seqlenQ', t.seqlenQ, 0, FMHA_BWD_MAX_SEQLEN);
  const seqlenK = checks.integer('seqlenK', t.seqlenK, 0, FMHA_BWD_MAX_SEQLEN);
  const maxSeqlenQ = checks.integer('maxSeqlenQ', t.maxSeqlenQ, 0, FMHA_BWD_MAX_SEQLEN);
  const maxSeqlenK = checks.integer('maxSeqlenK', t.maxSeqlenK, 0, FMHA_BWD_MAX_SEQLEN);
  let seqstartQ: number[] = [];
  let seqstartK: number[] = [];
  if (t.groupMode) {
    if (t.seqstartQ === undefined) fail('seqstartQ', 'is required in group mode (cumulative physical query rows, batch + 1 entries)', t.seqstartQ);
    if (t.seqstartK === undefined) fail('seqstartK', 'is required in group mode (cumulative physical key rows, batch + 1 entries)', t.seqstartK);
    seqstartQ = checks.seqstarts('seqstartQ', t.seqstartQ, batch);
    seqstartK = checks.seqstarts('seqstartK', t.seqstartK, batch);
    if (seqlenQ !== seqstartQ[batch]) fail('seqlenQ', `must be the total physical query rows seqstartQ[${batch}] = ${seqstartQ[batch]} in group mode`, seqlenQ);
    if (seqlenK !== seqstartK[batch]) fail('seqlenK', `must be the total physical key rows seqstartK[${batch}] = ${seqstartK[batch]} in group mode`, seqlenK);
    const slotQ = longestSlot(seqstartQ);
    const slotK = longestSlot(seqstartK);
    if (maxSeqlenQ > slotQ) fail('maxSeqlenQ', `must be at most the longest physical query slot ${slotQ}`, maxSeqlenQ);
    if (maxSeqlenK > slotK) fail('maxSeqlenK', `must be at most the longest physical key slot ${slotK}`, maxSeqlenK);
  } else {
    if (t.seqstartQ !== undefined) fail('seqstartQ', 'is only for group mode', t.seqstartQ);
    if (t.seqstartK !== undefined) fail('seqstartK', 'is only for group mode', t.seqstartK);
    if (maxSeqlenQ !== seqlenQ) fail('maxSeqlenQ', `must equal seqlenQ = ${seqlenQ} in batch mode`, maxSeqlenQ);
    if (maxSeqlenK !== seqlenK) fail('maxSeqlenK', `must equal seqlenK = ${seqlenK} in batch mode`, maxSeqlenK);
  }
  const mask = checks.mask(t.mask);
  const bias = checks.oneOf('bias', t.bias ?? 'none', FMHA_BWD_BIAS_KINDS);
  const hasDbias = checks.flag('hasDbias', t.hasDbias, false);
  const hasDropout = checks.flag('hasDropout', t.hasDropout, false);
  const storeRandval = checks.flag('storeRandval', t.storeRandval, false);
  if (hasDbias && bias !== 'elementwise') fail('hasDbias', 'needs bias = elementwise (dBias is the gradient of a bias tensor)', bias);
  if (storeRandval && !hasDropout) fail('storeRandval', 'needs hasDropout (there are no random values without dropout)', storeRandval);
  return Object.freeze({
    seqlenQ,
    seqlenK,
    batch,
    maxSeqlenQ,
    maxSeqlenK,
    hdimQ,
    hdimV,
    nheadQ,
    nheadK,
    dtype,
    groupMode: t.groupMode,
    mask,
    bias,
    hasDbias,
    hasDropout,
    storeRandval,
    deterministic: t.deterministic,
    seqstartQ: Object.freeze(seqstartQ),
    seqstartK: Object.freeze(seqstartK),
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
