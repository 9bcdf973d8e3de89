import { ArgumentError, getDType, type Tolerance } from '@tilekit/numeric';
import { attentionOperandMaxAbs, resolveAttentionFwdArgs, type AttentionFwdArgs } from './attentionFwdArgs.ts';

/** What the error of a forward kernel against `referenceAttentionFwd` depends on. */
export interface AttentionFwdErrorModel {
  /** Input, P (narrowed before P·V) and output dtype. */
  readonly dtype: 'fp16' | 'bf16';
  /** The most keys one row sums over. */
  readonly seqlenK: number;
  readonly hdimQ: number;
  readonly scale: number;
  readonly maxAbsQ: number;
  readonly maxAbsK: number;
  readonly maxAbsV: number;
}

/** Tolerances (|out − ref| ≤ atol + rtol·|ref|) for O and for LSE. */
export interface AttentionFwdTolerance {
  readonly o: Tolerance;
  readonly lse: Tolerance;
}

/** fp32 unit roundoff, doubled: tensor-core fp32 adders may truncate instead of rounding. */
const U_ACC = 2 ** -23;
const U32 = 2 ** -24;

/** γ(n) = n·u / (1 − n·u): the relative error bound of an n-term sum (Higham). */
function gamma(n: number, u: number): number {
  const nu = n * u;
  if (nu >= 0.5) throw new ArgumentError('seqlenK', 'is too long for a bounded fp32 accumulation error', n);
  return nu / (1 - nu);
}

/**
 * A per-component error budget for a flash-attention forward kernel (fp32 S and O accumulators,
 * exp2-domain online softmax, P narrowed to `dtype` before P·V, O rounded to `dtype`) compared with
 * the fp32 reference whose P is not narrowed, in the spirit of numeric's `absoluteThreshold` and
 * CK-tile's accuracy contract:
 * - logits: δs ≤ (γ(d) + 8·u32)·B with B = scale·d·max|q|·max|k| (the QKᵀ sum, scale, log2 e, the
 *   max subtraction and ex2.approx), which moves each p by a factor e^{±δs} in both P·V and the sum;
 * - O: max|v|·(u_P + 2·γ(sk) + 2·(e^{δs} − 1)) (narrowed P, the P·V and row sums over sk keys) plus
 *   one ulp of `dtype` at max|v|'s binade (output rounding, either direction), rtol = ½ ulp;
 * - LSE (natural log, fp32): 2·δs + 2·γ(sk) + 2^-20 absolute, 2^-21 relative (lg2.approx and the
 *   final scaling).
 * Worst-case bounds: a kernel that is right never fails them; a wrong tile, mask or rescale is off
 * by O(max|v|), far above them.
 * Example: fp16, sk 4097, d 128, |q|, |k|, |v| ≤ 1 → O atol ≈ 2.8e-3, rtol 2^-11.
 */
export function attentionFwdTolerance(m: AttentionFwdErrorModel): AttentionFwdTolerance {
  const dt = getDType(m.dtype);
  for (const key of ['seqlenK', 'hdimQ'] as const) {
    if (!Number.isSafeInteger(m[key]) || m[key] < 0) throw new ArgumentError(key, 'must be a non-negative integer', m[key]);
  }
  for (const key of ['scale', 'maxAbsQ', 'maxAbsK', 'maxAbsV'] as const) {
    if (!Number.isFinite(m[key]) || m[key] < 0) throw new ArgumentError(key, 'must be a finite number ≥ 0', m[key]);
  }
  const logitBound = m.scale * m.hdimQ * m.maxAbsQ * m.maxAbsK;
  const deltaS = (gamma(m.hdimQ, U_ACC) + 8 * U32) * logitBound;
  const pFactor = Math.expm1(deltaS);
  const sumError = gamma(Math.max(m.seqlenK, 1), U_ACC);
  const binade = m.maxAbsV > 0 ? 2 ** Math.floor(Math.log2(m.maxAbsV)) : 0;
  const oAtol = m.maxAbsV * (dt.epsilon / 2 + 2 * sumError + 2 * pFactor) + dt.epsilon * binade;
  return Object.freeze({
    o: Object.freeze({ rtol: dt.epsilon / 2, atol: oAtol }),
    lse: Object.freeze({ rtol: 2 ** -21, atol: 2 * deltaS + 2 * sumError + 2 ** -20 }),
  });
}

/**
 * `attentionFwdTolerance` for a concrete problem: the largest |q|, |k|, |v| stored (every element of
 * the arrays, a safe over-estimate), the longest key sequence, the scale and dims of `args`.
 * @throws ArgumentError when Q is not fp16/bf16 storage.
 */
export function attentionFwdToleranceFor(args: AttentionFwdArgs): AttentionFwdTolerance {
  const a = resolveAttentionFwdArgs(args);
  const dtype = args.q.dtype;
  if (dtype === 'fp32') throw new ArgumentError('q.dtype', 'must be fp16 or bf16 (the kernel narrows P to it)', dtype);
  return attentionFwdTolerance({
    dtype,
    seqlenK: Math.max(0, ...a.seqlensK),
    hdimQ: a.hdimQ,
    scale: a.scale,
    maxAbsQ: attentionOperandMaxAbs(args.q),
    maxAbsK: attentionOperandMaxAbs(args.k),
    maxAbsV: attentionOperandMaxAbs(args.v),
  });
}
