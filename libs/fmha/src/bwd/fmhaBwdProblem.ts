// The Problem of an attention backward operator (the dense one and FFPA's), in the forward's style: what to differentiate
// (shapes, batch or group mode, GQA, mask, scale, layouts/strides of the eight tensors) and
// whether dQ must be bitwise reproducible. Validated with typed errors naming the field; turned
// into @tilekit/fmha's FmhaBwdTraits for the pure launcher.
import {
  ATTENTION_MAX_HDIM,
  ATTENTION_MAX_SEQLEN,
  attentionProblemChecks,
  type AttentionSequences,
} from '../problem/attentionProblemChecks.ts';
import type { AttentionProblemFields } from '../problem/attentionProblemFields.ts';
import { checkedAttentionProblem, type CheckedAttentionProblem } from '../problem/checkedAttentionProblem.ts';
import { formatAttentionMaskSpec, isCausalMask, type AttentionMaskSpec } from '../mask/attentionMaskSpec.ts';
import { attentionTensorSpan, type AttentionLayout, type AttentionTensorStrides } from '../reference/attentionTensorLayout.ts';
import { FMHA_SCORE_MODIFIER_KINDS, type FmhaScoreModifierKind } from '../scoreMod/fmhaScoreModifier.ts';
import { FMHA_BWD_DTYPES, type FmhaBwdDType, type FmhaBwdTraits } from './fmhaBwdTraits.ts';
import { ArgumentError, ArgumentProblems } from '@tilekit/numeric';

/** An FMHA backward problem field broke a rule; `argument` is `problem.<field>`. */
export class FmhaBwdArgumentError extends ArgumentError {}

/** Element types of Q, K, V, O, dO and dQ, dK, dV (the traits' list). */

/** The largest sequence (and group-mode total) length of a problem. */
export const FMHA_BWD_PROBLEM_MAX_SEQLEN = ATTENTION_MAX_SEQLEN;

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
export interface FmhaBwdProblem extends AttentionProblemFields {
  readonly dtype: FmhaBwdDType;
  /** Batch mode only (no per-batch keys in group mode); default seqlenQ. */
  readonly seqlenK?: number;
  readonly inputLayout?: AttentionLayout;
  readonly outputLayout?: AttentionLayout;
  readonly strides?: Partial<Readonly<Record<FmhaBwdTensor, AttentionTensorStrides>>>;
  /** A spec or CK's `-mask=` string; default none. */
  readonly mask?: AttentionMaskSpec | string;
  /** Softmax scale of the forward (default 1/√hdimQ), rounded to fp32. */
  readonly scale?: number;
  /** dQ reduced in a fixed order (bitwise-reproducible runs); default false (atomic adds). */
  readonly deterministic?: boolean;
  /**
   * A score modifier of the forward being differentiated (soft-capping or ALiBi; its values come
   * with the buffers, as the forward's); default none.
   */
  readonly scoreModifier?: FmhaScoreModifierKind;
}

/** A problem with every default filled in (group mode: seqlenQ/seqlenK the longest slots; seqstarts empty in batch mode). */
export interface CheckedFmhaBwdProblem extends CheckedAttentionProblem {
  readonly dtype: FmhaBwdDType;
  readonly seqstartQ: readonly number[];
  readonly seqstartK: readonly number[];
  readonly inputLayout: AttentionLayout;
  readonly outputLayout: AttentionLayout;
  readonly strides: Readonly<Record<FmhaBwdTensor, AttentionTensorStrides>>;
  readonly deterministic: boolean;
  /** The score modifier the dq_dk_dv kernel must apply; absent: none. */
  readonly scoreModifier?: FmhaScoreModifierKind;
}

const checks = attentionProblemChecks(FmhaBwdArgumentError, 'problem');

/** The strides' given object: an object whose keys are tensors of the backward. */
function givenStrides(p: FmhaBwdProblem): NonNullable<FmhaBwdProblem['strides']> {
  const given = p.strides ?? {};
  if (typeof given !== 'object' || given === null)
    throw new FmhaBwdArgumentError('problem.strides', 'must be an object of per-tensor strides', given);
  const v = new ArgumentProblems(FmhaBwdArgumentError);
  for (const key of Object.keys(given))
    if (!(FMHA_BWD_TENSORS as readonly string[]).includes(key))
      v.report(`problem.strides.${key}`, `is not a tensor of the backward (${FMHA_BWD_TENSORS.join(', ')})`, key);
  v.throwIfAny();
  return given;
}

/** What the eight tensors' strides are checked against. */
interface BwdShape {
  readonly heads: { readonly nheadQ: number; readonly nheadK: number };
  readonly hdimQ: number;
  readonly hdimV: number;
  readonly sequences: AttentionSequences;
  readonly inputLayout: AttentionLayout;
  readonly outputLayout: AttentionLayout;
}

/** Layout, heads, rows and head dim of each tensor. */
function tensorShapes(s: BwdShape): Record<FmhaBwdTensor, { layout: AttentionLayout; nhead: number; rows: number; hdim: number }> {
  const { nheadQ, nheadK } = s.heads;
  const { rowsQ, rowsK } = s.sequences;
  const { hdimQ, hdimV, inputLayout, outputLayout } = s;
  return {
    q: { layout: inputLayout, nhead: nheadQ, rows: rowsQ, hdim: hdimQ },
    k: { layout: inputLayout, nhead: nheadK, rows: rowsK, hdim: hdimQ },
    v: { layout: inputLayout, nhead: nheadK, rows: rowsK, hdim: hdimV },
    o: { layout: outputLayout, nhead: nheadQ, rows: rowsQ, hdim: hdimV },
    dO: { layout: outputLayout, nhead: nheadQ, rows: rowsQ, hdim: hdimV },
    dQ: { layout: inputLayout, nhead: nheadQ, rows: rowsQ, hdim: hdimQ },
    dK: { layout: inputLayout, nhead: nheadK, rows: rowsK, hdim: hdimQ },
    dV: { layout: inputLayout, nhead: nheadK, rows: rowsK, hdim: hdimV },
  };
}

/** Every tensor's strides, each checked on its own (every broken one reported to `v`). */
function allStrides(
  v: ArgumentProblems,
  given: NonNullable<FmhaBwdProblem['strides']> | undefined,
  s: BwdShape | undefined,
): Record<FmhaBwdTensor, AttentionTensorStrides> | undefined {
  if (given === undefined || s === undefined) return undefined;
  const shape = tensorShapes(s);
  const group = s.sequences.mode === 'group';
  const checked = FMHA_BWD_TENSORS.map(
    (t) =>
      [
        t,
        v.check(() => checks.strides(`strides.${t}`, given[t], shape[t].layout, shape[t].nhead, shape[t].rows, shape[t].hdim, group)),
      ] as const,
  );
  return checked.every(([, st]) => st !== undefined)
    ? (Object.fromEntries(checked) as Record<FmhaBwdTensor, AttentionTensorStrides>)
    : undefined;
}

/** The shape the strides need, or undefined when one of its fields was invalid. */
function bwdShape(
  heads: BwdShape['heads'] | undefined,
  hdimQ: number | undefined,
  hdimV: number | undefined,
  sequences: AttentionSequences | undefined,
  layouts: readonly [AttentionLayout | undefined, AttentionLayout | undefined],
): BwdShape | undefined {
  const [inputLayout, outputLayout] = layouts;
  if (
    heads === undefined ||
    hdimQ === undefined ||
    hdimV === undefined ||
    sequences === undefined ||
    inputLayout === undefined ||
    outputLayout === undefined
  )
    return undefined;
  return { heads, hdimQ, hdimV, sequences, inputLayout, outputLayout };
}

/**
 * Validates a problem and returns it with defaults, frozen. Rules (every violation found is
 * reported in one `FmhaBwdArgumentError` naming `problem.<field>`, the first one's as `argument`;
 * rules comparing fields are checked once those fields are valid): dtype fp16 | bf16; batch,
 * nheadQ, nheadK in [1, 65535] with nheadQ % nheadK = 0; hdimQ, hdimV in [1, 1024] (which ones run
 * is the catalog's business: an unsupported one gives an unsupported launcher); batch mode: seqlens
 * in [0, 2^30], no seqstart; group mode: seqstartQ and seqstartK (both) with batch + 1 entries from
 * 0, non-decreasing, no seqlenQ/seqlenK; layouts bhsd | bshd; explicit strides keep the layout's
 * order without overlap (batch 0 in group mode); a valid mask; scale finite > 0 (default 1/√hdimQ,
 * rounded to fp32); deterministic boolean; scoreModifier absent or one of softcap | alibi.
 */
export function checkFmhaBwdProblem(problem: FmhaBwdProblem): CheckedFmhaBwdProblem {
  if (typeof problem !== 'object' || problem === null) throw new FmhaBwdArgumentError('problem', 'must be an object', problem);
  const p = problem;
  const v = new ArgumentProblems(FmhaBwdArgumentError);
  const dtype = v.check(() => checks.oneOf('dtype', p.dtype, FMHA_BWD_DTYPES));
  const heads = v.check(() => checks.heads(p, true));
  const hdimQ = v.check(() => checks.integer('hdimQ', p.hdimQ, 1, ATTENTION_MAX_HDIM));
  const hdimV = p.hdimV === undefined ? hdimQ : v.check(() => checks.integer('hdimV', p.hdimV, 1, ATTENTION_MAX_HDIM));
  const sequences = v.check(() => checks.sequences(p, heads?.batch, false));
  const layouts = [
    v.check(() => checks.layout('inputLayout', p.inputLayout)),
    v.check(() => checks.layout('outputLayout', p.outputLayout)),
  ] as const;
  const strides = allStrides(
    v,
    v.check(() => givenStrides(p)),
    bwdShape(heads, hdimQ, hdimV, sequences, layouts),
  );
  const mask = v.check(() => checks.mask(p.mask));
  // The default scale needs hdimQ; a given one is checked on its own.
  const scale = p.scale === undefined && hdimQ === undefined ? undefined : v.check(() => checks.scale(p.scale, hdimQ ?? 1));
  const deterministic = v.check(() => checks.flag('deterministic', p.deterministic, false));
  const scoreModifier =
    p.scoreModifier === undefined ? undefined : v.check(() => checks.oneOf('scoreModifier', p.scoreModifier, FMHA_SCORE_MODIFIER_KINDS));
  v.throwIfAny();
  return Object.freeze({
    dtype: dtype!,
    ...checkedAttentionProblem(heads!, { hdimQ: hdimQ!, hdimV: hdimV! }, sequences!, { scale: scale!, mask: mask! }),
    seqstartQ: sequences!.seqstartQ,
    seqstartK: sequences!.seqstartK,
    inputLayout: layouts[0]!,
    outputLayout: layouts[1]!,
    strides: Object.freeze(strides!),
    deterministic: deterministic!,
    ...(scoreModifier === undefined ? {} : { scoreModifier }),
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
  return Array.from({ length: p.batch }, (_, b) => ({
    sq: p.seqstartQ[b + 1]! - p.seqstartQ[b]!,
    sk: p.seqstartK[b + 1]! - p.seqstartK[b]!,
  }));
}

/**
 * FLOPs credited to a backward call (docs/benchmarks.md): 2.5 × the forward's Σ_b 2·nheadQ·sq·sk·(hdimQ +
 * hdimV), the forward's halved for a causal mask when sq = sk.
 */
export function fmhaBwdProblemFlops(p: CheckedFmhaBwdProblem): number {
  const causal = isCausalMask(p.mask);
  return (
    2.5 *
    fmhaBwdSequences(p).reduce((sum, { sq, sk }) => sum + (2 * p.nheadQ * sq * sk * (p.hdimQ + p.hdimV)) / (causal && sq === sk ? 2 : 1), 0)
  );
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

/** `fp16 group 3x8/2h sq[1,0,259] sk[17,5,300] d128/128 bhsd>bhsd mask=b deterministic softcap` — one line for logs. */
export function formatFmhaBwdProblem(p: CheckedFmhaBwdProblem): string {
  const heads = p.nheadK === p.nheadQ ? `${p.nheadQ}h` : `${p.nheadQ}/${p.nheadK}h`;
  const seqs = fmhaBwdSequences(p);
  const seq =
    p.mode === 'group' ? `sq[${seqs.map((s) => s.sq).join(',')}] sk[${seqs.map((s) => s.sk).join(',')}]` : `${p.seqlenQ}x${p.seqlenK}`;
  const extras = [
    p.mask.kind === 'none' ? '' : `mask=${formatAttentionMaskSpec(p.mask)}`,
    p.deterministic ? 'deterministic' : 'atomic dQ',
    p.scoreModifier ?? '',
  ].filter(Boolean);
  return [`${p.dtype} ${p.mode} ${p.batch}x${heads} ${seq} d${p.hdimQ}/${p.hdimV} ${p.inputLayout}>${p.outputLayout}`, ...extras].join(' ');
}
