import { makeGenericAttentionMask } from '../mask/genericAttentionMask.ts';
import { attentionScoreAt } from './attentionScoreModifier.ts';
import { resolveAttentionBwdArgs, type AttentionBwdArgs, type ResolvedAttentionBwdArgs } from './attentionBwdArgs.ts';
import { attentionLseIndex, attentionRowOffset, valueTable16, type AttentionOperand } from './attentionFwdArgs.ts';

/** The backward results (fp32) and two magnitudes the tolerance model reads. */
export interface AttentionBwdResult {
  /** dQ in `args.dqStrides` (nheadQ heads). */
  readonly dq: Float32Array;
  /** dK, dV in `args.dkStrides`/`dvStrides` (nheadK heads: summed over the query heads of each KV head). */
  readonly dk: Float32Array;
  readonly dv: Float32Array;
  /** D = rowsum(dO ∘ O) per (batch, query head, row), in the LSE layout (`attentionLseIndex`). */
  readonly d: Float32Array;
  /** max over (batch, KV head, key j) of Σ over the group's query heads and rows of P_ij (≤ group·sq). */
  readonly maxKeyWeight: number;
  /** max over kept (i, j) of |dP_ij − D_i| (the factor of P in dS). */
  readonly maxAbsDpMinusD: number;
  readonly args: ResolvedAttentionBwdArgs;
}

/** Row r of head h of batch b of `op` decoded into `out` (`dim` values). */
function readRow(
  op: AttentionOperand,
  a: ResolvedAttentionBwdArgs,
  rowStarts: readonly number[],
  b: number,
  h: number,
  r: number,
  dim: number,
  out: Float64Array,
  at = 0,
): void {
  const base = attentionRowOffset(a, op.strides, rowStarts, b, h, r);
  const data = op.data;
  if (op.dtype === 'fp32') for (let d = 0; d < dim; d++) out[at + d] = data[base + d]!;
  else {
    const table = valueTable16(op.dtype);
    for (let d = 0; d < dim; d++) out[at + d] = table[data[base + d]!]!;
  }
}

function dot(x: Float64Array, xo: number, y: Float64Array, yo: number, n: number): number {
  let s0 = 0;
  let s1 = 0;
  let d = 0;
  for (; d + 1 < n; d += 2) {
    s0 += x[xo + d]! * y[yo + d]!;
    s1 += x[xo + d + 1]! * y[yo + d + 1]!;
  }
  if (d < n) s0 += x[xo + d]! * y[yo + d]!;
  return s0 + s1;
}

/**
 * CK-tile's FMHA backward on the host in float64 arithmetic (at least as accurate as an fp32
 * reference; P and dS are NOT narrowed to the input type), from the forward's O and LSE:
 * per batch and query head h (reading KV head ⌊h / (nheadQ/nheadK)⌋) and query row i,
 *   D_i = Σ_d dO_id·O_id,  P_ij = exp(scale·⟨q_i, k_j⟩ − LSE_i) over the keys the mask keeps,
 *   dP_ij = ⟨dO_i, v_j⟩,  dS_ij = P_ij·(dP_ij − D_i),
 *   dQ_i = scale·Σ_j dS_ij·k_j,  dK_j += scale·Σ_i dS_ij·q_i,  dV_j += Σ_i P_ij·dO_i,
 * dK/dV summed over the query heads of each KV head (GQA). A fully masked row (or LSE = −∞)
 * contributes nothing and gets dQ = 0; keys no row keeps (and group-mode padding keys past the
 * batch's seqlenK) get dK = dV = 0. Outputs rounded to fp32 once.
 * Work: K and V of a (batch, KV head) are gathered once, only each row's kept key range is
 * visited (a causal mask halves the work).
 * Postconditions (property-tested): equals central finite differences of `naiveAttentionFwd`'s
 * Σ dO∘O on small shapes; Σ_j dV_j = Σ over kept rows of dO_i; GQA equals replicated K/V with
 * dK/dV summed per group.
 * @throws ArgumentError (see `resolveAttentionBwdArgs`).
 */
export function referenceAttentionBwd(args: AttentionBwdArgs): AttentionBwdResult {
  const a = resolveAttentionBwdArgs(args);
  const { hdimQ: dq, hdimV: dv, scale } = a;
  const dQ = new Float32Array(a.dqElements);
  const dK = new Float32Array(a.dkElements);
  const dV = new Float32Array(a.dvElements);
  const D = new Float32Array(a.lseElements);
  const ratio = a.nheadQ / a.nheadK;
  const maxSk = Math.max(0, ...a.seqlensK);
  const k = new Float64Array(maxSk * dq);
  const v = new Float64Array(maxSk * dv);
  const dKacc = new Float64Array(maxSk * dq);
  const dVacc = new Float64Array(maxSk * dv);
  const weight = new Float64Array(maxSk);
  const q = new Float64Array(dq);
  const dO = new Float64Array(dv);
  const o = new Float64Array(dv);
  const dQrow = new Float64Array(dq);
  let maxKeyWeight = 0;
  let maxAbsDpMinusD = 0;
  for (let b = 0; b < a.batch; b++) {
    const sq = a.seqlensQ[b]!;
    const sk = a.seqlensK[b]!;
    const mask = makeGenericAttentionMask(a.mask, sq, sk);
    for (let hk = 0; hk < a.nheadK; hk++) {
      for (let j = 0; j < sk; j++) {
        readRow(args.k, a, a.rowStartsK, b, hk, j, dq, k, j * dq);
        readRow(args.v, a, a.rowStartsK, b, hk, j, dv, v, j * dv);
      }
      dKacc.fill(0);
      dVacc.fill(0);
      weight.fill(0);
      for (let h = hk * ratio; h < (hk + 1) * ratio; h++) {
        for (let i = 0; i < sq; i++) {
          readRow(args.dO, a, a.rowStartsQ, b, h, i, dv, dO);
          readRow(args.o, a, a.rowStartsQ, b, h, i, dv, o);
          const lseAt = attentionLseIndex(a, b, h, i);
          const Di = dot(dO, 0, o, 0, dv);
          D[lseAt] = Di;
          const lse = args.lse[lseAt]!;
          const [lo, hi] = mask.keyRangeOfRow(i);
          const score = attentionScoreAt(a.scoreModifier, h, sq, sk);
          dQrow.fill(0);
          if (hi > lo && lse !== -Infinity) {
            readRow(args.q, a, a.rowStartsQ, b, h, i, dq, q);
            for (let j = lo; j < hi; j++) {
              const x = scale * dot(q, 0, k, j * dq, dq);
              const p = Math.exp(score.logit(x, i, j) - lse);
              const gap = dot(dO, 0, v, j * dv, dv) - Di;
              const ds = p * gap * score.derivative(x);
              maxAbsDpMinusD = Math.max(maxAbsDpMinusD, Math.abs(gap));
              weight[j] = weight[j]! + p;
              for (let d = 0; d < dq; d++) {
                dQrow[d] = dQrow[d]! + ds * k[j * dq + d]!;
                dKacc[j * dq + d] = dKacc[j * dq + d]! + ds * q[d]!;
              }
              for (let d = 0; d < dv; d++) dVacc[j * dv + d] = dVacc[j * dv + d]! + p * dO[d]!;
            }
          }
          const out = attentionRowOffset(a, a.dqStrides, a.rowStartsQ, b, h, i);
          for (let d = 0; d < dq; d++) dQ[out + d] = scale * dQrow[d]!;
        }
      }
      for (let j = 0; j < sk; j++) {
        maxKeyWeight = Math.max(maxKeyWeight, weight[j]!);
        const kOut = attentionRowOffset(a, a.dkStrides, a.rowStartsK, b, hk, j);
        const vOut = attentionRowOffset(a, a.dvStrides, a.rowStartsK, b, hk, j);
        for (let d = 0; d < dq; d++) dK[kOut + d] = scale * dKacc[j * dq + d]!;
        for (let d = 0; d < dv; d++) dV[vOut + d] = dVacc[j * dv + d]!;
      }
    }
  }
  return { dq: dQ, dk: dK, dv: dV, d: D, maxKeyWeight, maxAbsDpMinusD, args: a };
}
