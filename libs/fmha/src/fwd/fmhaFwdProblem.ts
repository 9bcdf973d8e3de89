// The Problem of the FMHA forward operator (what to compute), validated with every default filled in.
import type { AttentionMaskSpec } from '../mask/attentionMaskSpec.ts';
import type { AttentionLayout, AttentionTensorStrides } from '../reference/attentionTensorLayout.ts';
import type { AttentionProblemFields } from '../problem/attentionProblemFields.ts';
import {
  ATTENTION_MAX_BATCH,
  ATTENTION_MAX_HDIM,
  ATTENTION_MAX_HEADS,
  ATTENTION_MAX_SEQLEN,
  attentionProblemChecks,
  type AttentionSequences,
} from '../problem/attentionProblemChecks.ts';
import { checkedAttentionProblem, type AttentionProblemMode } from '../problem/checkedAttentionProblem.ts';
import { ArgumentProblems } from '@tilekit/numeric';
import { FmhaFwdArgumentError } from './fmhaFwdArgumentError.ts';
import type { FmhaFwdLaunchProblem } from './fmhaFwdLaunchProblem.ts';
import { FMHA_SCORE_MODIFIER_KINDS, type FmhaScoreModifierKind } from '../scoreMod/fmhaScoreModifier.ts';

/** Element types of Q, K, V and O (fp32 accumulation, P narrowed to the same type). */
export const FMHA_FWD_DTYPES = ['fp16', 'bf16'] as const;
export type FmhaFwdDType = (typeof FMHA_FWD_DTYPES)[number];

/** The (hdimQ, hdimV) pairs the operator has instances for. */
export const FMHA_FWD_HEAD_DIMS: FmhaFwdHeadDims = Object.freeze(
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
export const FMHA_FWD_MAX_SEQLEN = ATTENTION_MAX_SEQLEN;
/** The largest batch and head counts (grid dimensions). */
export const FMHA_FWD_MAX_BATCH = ATTENTION_MAX_BATCH;
export const FMHA_FWD_MAX_HEADS = ATTENTION_MAX_HEADS;
/** The most key splits of split-KV (CK's kMaxSplits = 2^7). */
export const FMHA_FWD_MAX_SPLITS = 128;

/**
 * The Problem of the FMHA forward operator (CK-tile's fmha_fwd arguments, what to compute):
 * O = softmax(scale·Q·Kᵀ + mask)·V, optional LSE. Batch mode: `seqlenQ`/`seqlenK`. Group (varlen)
 * mode: `seqstartQ`/`seqstartK` (batch + 1 entries from 0, non-decreasing) and optionally `seqlenK`
 * per batch (keys used at the start of each slot; batch mode: default seqlenQ). Query head h reads kv
 * head ⌊h / (nheadQ / nheadK)⌋. hdimV defaults to hdimQ (128 with hdimQ 192).
 */
export interface FmhaFwdProblem extends AttentionProblemFields {
  readonly dtype: FmhaFwdDType;
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
  /** A score modifier to apply (soft-capping or ALiBi; its values come with the buffers); default none. One pass only (no split-KV). */
  readonly scoreModifier?: FmhaScoreModifierKind;
}

/** Batch or group (varlen) mode. */
export type FmhaFwdProblemMode = AttentionProblemMode;

/** A problem with every default filled in: the launcher's problem plus the group-mode sequences, layouts and the split choice. */
export interface CheckedFmhaFwdProblem extends FmhaFwdLaunchProblem {
  readonly dtype: FmhaFwdDType;
  /** Group mode only (else empty): seqstartQ, seqstartK, and the keys used per batch. */
  readonly seqstartQ: readonly number[];
  readonly seqstartK: readonly number[];
  readonly seqlensK: readonly number[];
  /** Whether the caller gave per-batch seqlenK in group mode (the kernel then reads it). */
  readonly hasSeqlenK: boolean;
  readonly inputLayout: AttentionLayout;
  readonly outputLayout: AttentionLayout;
  /** The caller asked for splitKv 'auto': the runner replaces numSplits by `chooseFmhaFwdSplits`. */
  readonly splitKvAuto: boolean;
}

const checks = attentionProblemChecks(FmhaFwdArgumentError, 'problem');

/** (hdimQ, hdimV) pairs an operator has instances for. */
export type FmhaFwdHeadDims = readonly { readonly hdimQ: number; readonly hdimV: number }[];

/** hdimQ one the catalog knows, hdimV (default: the first pair's) one of its pairs. */
function headDims(p: FmhaFwdProblem, known: FmhaFwdHeadDims): { readonly hdimQ: number; readonly hdimV: number } {
  const hdimQ = checks.integer('hdimQ', p.hdimQ, 1, ATTENTION_MAX_HDIM);
  const pairs = known.filter((d) => d.hdimQ === hdimQ);
  if (pairs.length === 0) checks.oneOf('hdimQ', hdimQ, [...new Set(known.map((d) => d.hdimQ))]);
  const hdimV = checks.integer('hdimV', p.hdimV ?? pairs[0]!.hdimV, 1, ATTENTION_MAX_HDIM);
  if (!pairs.some((d) => d.hdimV === hdimV))
    throw new FmhaFwdArgumentError('problem.hdimV', `must be ${pairs.map((d) => d.hdimV).join(' or ')} with hdimQ = ${hdimQ}`, hdimV);
  return { hdimQ, hdimV };
}

/** What the strides of Q, K, V and O are checked against. */
interface FwdShape {
  readonly heads: { readonly nheadQ: number; readonly nheadK: number };
  readonly hdims: { readonly hdimQ: number; readonly hdimV: number };
  readonly sequences: AttentionSequences;
  readonly inputLayout: AttentionLayout;
  readonly outputLayout: AttentionLayout;
}

/** The four tensors' strides, each checked on its own (every broken one reported to `v`). */
function tensorStrides(v: ArgumentProblems, p: FmhaFwdProblem, s: FwdShape | undefined) {
  if (s === undefined) return undefined;
  const { nheadQ, nheadK } = s.heads;
  const { hdimQ, hdimV } = s.hdims;
  const { rowsQ, rowsK, mode } = s.sequences;
  const group = mode === 'group';
  const qStrides = v.check(() => checks.strides('qStrides', p.qStrides, s.inputLayout, nheadQ, rowsQ, hdimQ, group));
  const kStrides = v.check(() => checks.strides('kStrides', p.kStrides, s.inputLayout, nheadK, rowsK, hdimQ, group));
  const vStrides = v.check(() => checks.strides('vStrides', p.vStrides, s.inputLayout, nheadK, rowsK, hdimV, group));
  const oStrides = v.check(() => checks.strides('oStrides', p.oStrides, s.outputLayout, nheadQ, rowsQ, hdimV, group));
  return qStrides && kStrides && vStrides && oStrides && { qStrides, kStrides, vStrides, oStrides };
}

/** The shape the strides need, or undefined when one of its fields was invalid. */
function fwdShape(
  heads: FwdShape['heads'] | undefined,
  hdims: FwdShape['hdims'] | undefined,
  sequences: AttentionSequences | undefined,
  inputLayout: AttentionLayout | undefined,
  outputLayout: AttentionLayout | undefined,
): FwdShape | undefined {
  if (heads === undefined || hdims === undefined || sequences === undefined || inputLayout === undefined || outputLayout === undefined)
    return undefined;
  return { heads, hdims, sequences, inputLayout, outputLayout };
}

/**
 * Validates a problem and returns it with defaults, frozen. Rules (every violation found is
 * reported in one `FmhaFwdArgumentError` naming `problem.<field>` and the rule, the first one's
 * field as `argument`; rules comparing fields are checked once those fields are valid): dtype
 * fp16 | bf16; batch, nheadQ, nheadK in [1, 65535] with nheadQ % nheadK = 0; (hdimQ, hdimV) one of
 * 32/32, 64/64, 96/96, 128/128, 192/128, 256/256; batch mode: seqlens in [0, 2^30], no seqstart;
 * group mode: seqstartQ and seqstartK with batch + 1 entries from 0, non-decreasing, totals ≤ 2^30,
 * per-batch seqlenK (optional) at most its slot; layouts bhsd | bshd; explicit strides keep the
 * layout's order without overlap (see `AttentionProblemChecks.strides`); a valid mask (spec or CK
 * string); lse boolean; scale finite > 0 (default 1/√hdimQ, rounded to fp32); splitKv an integer in
 * [1, 128] or 'auto' (numSplits 1, `splitKvAuto` true). `options.headDims` replaces the head-dim
 * pairs (an operator with other instances, e.g. FFPA's large head dims).
 */
export function checkFmhaFwdProblem(problem: FmhaFwdProblem, options: { readonly headDims?: FmhaFwdHeadDims } = {}): CheckedFmhaFwdProblem {
  if (typeof problem !== 'object' || problem === null) throw new FmhaFwdArgumentError('problem', 'must be an object', problem);
  const p = problem;
  const v = new ArgumentProblems(FmhaFwdArgumentError);
  const dtype = v.check(() => checks.oneOf('dtype', p.dtype, FMHA_FWD_DTYPES));
  const heads = v.check(() => checks.heads(p, true));
  const hdims = v.check(() => headDims(p, options.headDims ?? FMHA_FWD_HEAD_DIMS));
  const sequences = v.check(() => checks.sequences(p, heads?.batch, true));
  const inputLayout = v.check(() => checks.layout('inputLayout', p.inputLayout));
  const outputLayout = v.check(() => checks.layout('outputLayout', p.outputLayout));
  const strides = tensorStrides(v, p, fwdShape(heads, hdims, sequences, inputLayout, outputLayout));
  const mask = v.check(() => checks.mask(p.mask));
  const lse = v.check(() => checks.flag('lse', p.lse, false));
  // The default scale needs hdimQ; a given one is checked on its own.
  const scale = p.scale === undefined && hdims === undefined ? undefined : v.check(() => checks.scale(p.scale, hdims?.hdimQ ?? 1));
  const scoreModifier =
    p.scoreModifier === undefined ? undefined : v.check(() => checks.oneOf('scoreModifier', p.scoreModifier, FMHA_SCORE_MODIFIER_KINDS));
  // A score modifier runs in one pass: 'auto' stays at one split, an explicit split count is an error.
  const splitKvAuto = p.splitKv === 'auto' && p.scoreModifier === undefined;
  const numSplits = p.splitKv === 'auto' ? 1 : v.check(() => checks.integer('splitKv', p.splitKv ?? 1, 1, FMHA_FWD_MAX_SPLITS));
  if (p.scoreModifier !== undefined && numSplits !== undefined && numSplits > 1)
    v.report('problem.splitKv', `must be 1 or 'auto' with a score modifier (no split-KV instance applies ${p.scoreModifier})`, numSplits);
  v.throwIfAny();
  const seq = sequences!;
  return Object.freeze({
    dtype: dtype!,
    ...checkedAttentionProblem(heads!, hdims!, seq, { scale: scale!, mask: mask! }),
    seqstartQ: seq.seqstartQ,
    seqstartK: seq.seqstartK,
    seqlensK: seq.seqlensK,
    hasSeqlenK: seq.hasSeqlenK,
    inputLayout: inputLayout!,
    outputLayout: outputLayout!,
    ...strides!,
    lse: lse!,
    numSplits: numSplits!,
    splitKvAuto,
    ...(scoreModifier === undefined ? {} : { scoreModifier }),
  });
}
