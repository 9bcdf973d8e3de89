// The CPU side of checking a backward run: the forward's O (rounded to the dtype, as a forward
// kernel would store it) and LSE from `referenceAttentionFwd`, then `referenceAttentionBwd` and its
// tolerance, and a comparison of dQ/dK/dV (bit patterns in the problem's strides) with it.
import { attentionBwdToleranceFor, type AttentionBwdTolerance } from '../reference/attentionBwdTolerance.ts';
import { attentionRowOffset, type AttentionFwdArgs } from '../reference/attentionFwdArgs.ts';
import type { AttentionBwdArgs } from '../reference/attentionBwdArgs.ts';
import { referenceAttentionBwd, type AttentionBwdResult } from '../reference/referenceAttentionBwd.ts';
import { referenceAttentionFwd } from '../reference/referenceAttentionFwd.ts';
import type { AttentionScoreModifier } from '../reference/attentionScoreModifier.ts';
import type { CheckedFmhaBwdProblem } from './fmhaBwdProblem.ts';
import { decode, encode } from '@tilekit/numeric';

/** Host inputs of a backward problem: fp16/bf16 bit patterns in the problem's strides. */
export interface FmhaBwdHostInputs {
  readonly q: Uint16Array;
  readonly k: Uint16Array;
  readonly v: Uint16Array;
  readonly dO: Uint16Array;
}

/** The forward's outputs and the backward reference of a problem. */
export interface FmhaBwdReference {
  /** O rounded to the dtype (bit patterns, the problem's O strides). */
  readonly o: Uint16Array;
  /** The forward's LSE (natural log) in the problem's LSE layout. */
  readonly lse: Float32Array;
  readonly args: AttentionBwdArgs;
  readonly result: AttentionBwdResult;
  readonly tolerance: AttentionBwdTolerance;
}

/**
 * Runs `referenceAttentionFwd` on the problem's Q, K, V (O rounded to the dtype), then
 * `referenceAttentionBwd` with that O, its LSE and dO (dQ/dK/dV in the problem's strides), and
 * `attentionBwdToleranceFor`; both with `scoreModifier` (the reference spec of the problem's
 * modifier, e.g. `attentionScoreSetup(...).reference`) applied when given.
 */
export function fmhaBwdReference(
  p: CheckedFmhaBwdProblem,
  data: FmhaBwdHostInputs,
  scoreModifier?: AttentionScoreModifier,
): FmhaBwdReference {
  const op = (d: Uint16Array, name: 'q' | 'k' | 'v' | 'o' | 'dO') => ({ dtype: p.dtype, data: d, strides: p.strides[name] });
  const mode = p.mode === 'group' ? { seqstartQ: p.seqstartQ, seqstartK: p.seqstartK } : { seqlenQ: p.seqlenQ, seqlenK: p.seqlenK };
  const common = {
    batch: p.batch,
    nheadQ: p.nheadQ,
    nheadK: p.nheadK,
    hdimQ: p.hdimQ,
    hdimV: p.hdimV,
    ...mode,
    q: op(data.q, 'q'),
    k: op(data.k, 'k'),
    v: op(data.v, 'v'),
    scale: p.scale,
    mask: p.mask,
    ...(scoreModifier === undefined ? {} : { scoreModifier }),
  };
  const fwd: AttentionFwdArgs = { ...common, oStrides: p.strides.o };
  const f = referenceAttentionFwd(fwd);
  const o = new Uint16Array(Math.max(1, f.o.length));
  f.o.forEach((x, i) => (o[i] = encode(p.dtype, x)));
  const lse = Float32Array.from(f.lse);
  const args: AttentionBwdArgs = {
    ...common,
    o: op(o, 'o'),
    dO: op(data.dO, 'dO'),
    lse,
    dqStrides: p.strides.dQ,
    dkStrides: p.strides.dK,
    dvStrides: p.strides.dV,
  };
  const result = referenceAttentionBwd(args);
  return { o, lse, args, result, tolerance: attentionBwdToleranceFor(args, result) };
}

/** The outcome of comparing one gradient. */
export interface FmhaBwdComparison {
  readonly tensor: 'dQ' | 'dK' | 'dV';
  readonly checked: number;
  readonly wrong: number;
  readonly maxAbsErr: number;
  readonly first: string;
}

/**
 * Compares the kernel's dQ, dK, dV (bit patterns in the problem's strides; dQ may also be fp32
 * values there, e.g. a dq_acc workspace summed on the host) with the reference on every element of
 * every sequence's rows (padding never read): |got − want| ≤ atol + rtol·|want|.
 */
export function compareFmhaBwd(
  p: CheckedFmhaBwdProblem,
  ref: FmhaBwdReference,
  got: { readonly dQ: Uint16Array | Float32Array; readonly dK: Uint16Array; readonly dV: Uint16Array },
): FmhaBwdComparison[] {
  const a = ref.result.args;
  const spec = [
    {
      tensor: 'dQ' as const,
      bits: got.dQ,
      want: ref.result.dq,
      strides: a.dqStrides,
      heads: p.nheadQ,
      dim: p.hdimQ,
      rows: a.seqlensQ,
      starts: a.rowStartsQ,
      tol: ref.tolerance.dq,
    },
    {
      tensor: 'dK' as const,
      bits: got.dK,
      want: ref.result.dk,
      strides: a.dkStrides,
      heads: p.nheadK,
      dim: p.hdimQ,
      rows: a.seqlensK,
      starts: a.rowStartsK,
      tol: ref.tolerance.dk,
    },
    {
      tensor: 'dV' as const,
      bits: got.dV,
      want: ref.result.dv,
      strides: a.dvStrides,
      heads: p.nheadK,
      dim: p.hdimV,
      rows: a.seqlensK,
      starts: a.rowStartsK,
      tol: ref.tolerance.dv,
    },
  ];
  return spec.map((s) => {
    let checked = 0;
    let wrong = 0;
    let maxAbsErr = 0;
    let first = '';
    for (let b = 0; b < p.batch; b++) {
      for (let h = 0; h < s.heads; h++) {
        for (let r = 0; r < s.rows[b]!; r++) {
          const base = attentionRowOffset(a, s.strides, s.starts, b, h, r);
          for (let j = 0; j < s.dim; j++) {
            const want = s.want[base + j]!;
            const value = s.bits instanceof Float32Array ? s.bits[base + j]! : decode(p.dtype, s.bits[base + j]!);
            const err = Math.abs(value - want);
            maxAbsErr = Number.isNaN(err) ? Infinity : Math.max(maxAbsErr, err);
            checked++;
            if (!(err <= s.tol.atol + s.tol.rtol * Math.abs(want))) {
              wrong++;
              first ||= `${s.tensor}[b${b} h${h} r${r} d${j}] = ${value}, reference ${want} (|err| ${err.toExponential(2)} > ${(s.tol.atol + s.tol.rtol * Math.abs(want)).toExponential(2)})`;
            }
          }
        }
      }
    }
    return { tensor: s.tensor, checked, wrong, maxAbsErr, first };
  });
}
