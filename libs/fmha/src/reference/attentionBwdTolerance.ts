import { ArgumentError, getDType, type Tolerance } from '@tilekit/numeric';
import type { AttentionBwdArgs } from './attentionBwdArgs.ts';
import { attentionOperandMaxAbs } from './attentionFwdArgs.ts';
import type { AttentionBwdResult } from './referenceAttentionBwd.ts';

/** What the error of a backward kernel against `referenceAttentionBwd` depends on. */
export interface AttentionBwdErrorModel {
  /** Input/output dtype; P and dS are narrowed to it before their gemms. */
  readonly dtype: 'fp16' | 'bf16';
  /** The most query rows of one head (a key column sums over them). */
  readonly seqlenQ: number;
  /** The most keys of one row. */
  readonly seqlenK: number;
  readonly hdimQ: number;
  readonly hdimV: number;
  /** nheadQ / nheadK: the query heads whose dK/dV a KV head sums. */
  readonly groupSize: number;
  readonly scale: number;
  readonly maxAbsQ: number;
  readonly maxAbsK: number;
  readonly maxAbsV: number;
  readonly maxAbsO: number;
  readonly maxAbsDo: number;
  /** max_j Σ_i P_ij over a KV head's group (`AttentionBwdResult.maxKeyWeight`); default the bound groupSize·seqlenQ. */
  readonly maxKeyWeight?: number;
  /** max |dP_ij − D_i| (`AttentionBwdResult.maxAbsDpMinusD`); default the bound hdimV·max|dO|·(max|V| + max|O|). */
  readonly maxAbsDpMinusD?: number;
}

/** Tolerances (|out − ref| ≤ atol + rtol·|ref|) of dQ, dK, dV and D. */
export interface AttentionBwdTolerance {
  readonly dq: Tolerance;
  readonly dk: Tolerance;
  readonly dv: Tolerance;
  readonly d: Tolerance;
}

/** fp32 accumulation unit roundoff, doubled: tensor-core adders may truncate. */
const U_ACC = 2 ** -23;
const U32 = 2 ** -24;

function gamma(n: number, u: number, what: string): number {
  const nu = n * u;
  if (nu >= 0.5) throw new ArgumentError(what, 'is too long for a bounded fp32 accumulation error', n);
  return nu / (1 - nu);
}

const binade = (x: number): number => (x > 0 ? 2 ** Math.floor(Math.log2(x)) : 0);

/**
 * A per-component error budget for a flash-attention backward kernel (fp32 accumulators, P
 * recomputed from LSE in the exp2 domain, P and dS narrowed to `dtype` before their gemms, dK/dV
 * accumulated in fp32 over the group's query heads, outputs rounded once) compared with the
 * float64 reference whose P and dS are not narrowed. With u the dtype's unit roundoff,
 * B_s = scale·d_q·max|q|·max|k| and G = max|dP − D|:
 * - P: a factor e^{±δp}, δp = (γ(d_q) + 8·u32)·B_s + 2·u32·(B_s + ln sk) (logit sum, exp2, fp32 LSE);
 * - dS_ij: |ΔdS_ij| ≤ P_ij·ε_ds, ε_ds = (e^{δp} − 1 + u + 3·u32)·G + γ(d_v)·d_v·max|dO|·(max|V| + max|O|)
 *   (P error, narrowing, dP and D sums);
 * - dQ_i = scale·Σ_j dS_ij k_j, Σ_j P_ij ≤ 1: atol = scale·max|k|·(ε_ds + γ(sk)·G);
 * - dK_j over W = max_j Σ_i P_ij (group included): atol = scale·max|q|·W·(ε_ds + γ(group·sq)·G);
 * - dV_j = Σ_i P_ij dO_i: atol = W·max|dO|·(u + e^{δp} − 1 + γ(group·sq));
 * each plus one ulp of `dtype` at the binade of its magnitude bound (output rounding either way),
 * rtol = u; D (fp32 output of dot_do_o): atol = γ(d_v)·d_v·max|dO|·max|O|, rtol = u32.
 * Worst-case bounds: a correct kernel never fails them; a wrong tile, mask or split is off by the
 * size of the gradient itself.
 */
export function attentionBwdTolerance(m: AttentionBwdErrorModel): AttentionBwdTolerance {
  const dt = getDType(m.dtype);
  for (const key of ['seqlenQ', 'seqlenK', 'hdimQ', 'hdimV'] as const) {
    if (!Number.isSafeInteger(m[key]) || m[key] < 0) throw new ArgumentError(key, 'must be a non-negative integer', m[key]);
  }
  if (!Number.isSafeInteger(m.groupSize) || m.groupSize < 1)
    throw new ArgumentError('groupSize', 'must be a positive integer', m.groupSize);
  for (const key of ['scale', 'maxAbsQ', 'maxAbsK', 'maxAbsV', 'maxAbsO', 'maxAbsDo'] as const) {
    if (!Number.isFinite(m[key]) || m[key] < 0) throw new ArgumentError(key, 'must be a finite number ≥ 0', m[key]);
  }
  for (const key of ['maxKeyWeight', 'maxAbsDpMinusD'] as const) {
    const v = m[key];
    if (v !== undefined && (!Number.isFinite(v) || v < 0)) throw new ArgumentError(key, 'must be a finite number ≥ 0', v);
  }
  const u = dt.epsilon / 2;
  const rows = m.groupSize * Math.max(m.seqlenQ, 1);
  const W = m.maxKeyWeight ?? rows;
  const dpBound = m.hdimV * m.maxAbsDo * m.maxAbsV;
  const dBound = m.hdimV * m.maxAbsDo * m.maxAbsO;
  const G = m.maxAbsDpMinusD ?? dpBound + dBound;
  const Bs = m.scale * m.hdimQ * m.maxAbsQ * m.maxAbsK;
  const deltaP = (gamma(m.hdimQ, U_ACC, 'hdimQ') + 8 * U32) * Bs + 2 * U32 * (Bs + Math.log(Math.max(m.seqlenK, 1)));
  const pFactor = Math.expm1(deltaP);
  const gV = gamma(m.hdimV, U_ACC, 'hdimV');
  const epsDs = (pFactor + u + 3 * U32) * G + gV * (dpBound + dBound);
  const gK = gamma(Math.max(m.seqlenK, 1), U_ACC, 'seqlenK');
  const gQ = gamma(rows, U_ACC, 'seqlenQ');
  const dqAtol = m.scale * m.maxAbsK * (epsDs + gK * G);
  const dkAtol = m.scale * m.maxAbsQ * W * (epsDs + gQ * G);
  const dvAtol = W * m.maxAbsDo * (u + pFactor + gQ);
  const dqMag = m.scale * m.maxAbsK * G;
  const dkMag = m.scale * m.maxAbsQ * W * G;
  const dvMag = W * m.maxAbsDo;
  const t = (atol: number, rtol = u): Tolerance => Object.freeze({ rtol, atol });
  return Object.freeze({
    dq: t(dqAtol + dt.epsilon * binade(dqMag)),
    dk: t(dkAtol + dt.epsilon * binade(dkMag)),
    dv: t(dvAtol + dt.epsilon * binade(dvMag)),
    d: t(gV * dBound, U32),
  });
}

/**
 * `attentionBwdTolerance` for a concrete problem and its reference result: the largest |q|, |k|,
 * |v|, |o|, |dO| stored (every element of the arrays, a safe over-estimate), the longest
 * sequences, the scale, dims and group size, and the reference's key weight and |dP − D|.
 * @throws ArgumentError when Q is not fp16/bf16 storage.
 */
export function attentionBwdToleranceFor(args: AttentionBwdArgs, ref: AttentionBwdResult): AttentionBwdTolerance {
  const a = ref.args;
  const dtype = args.q.dtype;
  if (dtype === 'fp32') throw new ArgumentError('q.dtype', 'must be fp16 or bf16 (the kernel narrows P and dS to it)', dtype);
  return attentionBwdTolerance({
    dtype,
    seqlenQ: Math.max(0, ...a.seqlensQ),
    seqlenK: Math.max(0, ...a.seqlensK),
    hdimQ: a.hdimQ,
    hdimV: a.hdimV,
    groupSize: a.nheadQ / a.nheadK,
    scale: a.scale,
    maxAbsQ: attentionOperandMaxAbs(args.q),
    maxAbsK: attentionOperandMaxAbs(args.k),
    maxAbsV: attentionOperandMaxAbs(args.v),
    maxAbsO: attentionOperandMaxAbs(args.o),
    maxAbsDo: attentionOperandMaxAbs(args.dO),
    maxKeyWeight: ref.maxKeyWeight,
    maxAbsDpMinusD: ref.maxAbsDpMinusD,
  });
}
