// Which strides of a backward problem its kernels cannot take: each operator's rules for the tensors
// its dq_dk_dv loads, and the rules every backward shares for the tensors the row kernels read or
// write (O read by dot_do_o, dQ stored by convert_dq, dK/dV stored in element pairs, row strides int32).
import type { CheckedFmhaBwdProblem, FmhaBwdTensor } from '@tilekit/fmha';
import { FMHA_BWD_DQ_STORE_VECTOR } from './fmhaBwdConvertDq.ts';

/** One stride a kernel cannot take: the tensor, which stride, its value and the rule it breaks. */
export interface FmhaBwdStrideProblem {
  readonly tensor: FmhaBwdTensor;
  readonly stride: 'row' | 'head' | 'batch';
  readonly value: number;
  readonly rule: string;
}

/** A rule on one stride (its value, and which stride it is): the reason it fails, or undefined. */
export type FmhaBwdStrideRule = (value: number, stride: 'row' | 'head' | 'batch') => string | undefined;

const INT32_ROW = 2 ** 31 - 8;

/** The rules of the row kernels' tensors and of dK/dV, shared by every backward. */
const SHARED_RULES: Readonly<Partial<Record<FmhaBwdTensor, FmhaBwdStrideRule>>> = {
  o: (s) => (s % 8 !== 0 ? 'must be a multiple of 8 elements (dot_do_o reads 16-byte vectors)' : undefined),
  dQ: (s) =>
    s % FMHA_BWD_DQ_STORE_VECTOR !== 0
      ? `must be a multiple of ${FMHA_BWD_DQ_STORE_VECTOR} elements (convert_dq stores ${FMHA_BWD_DQ_STORE_VECTOR}-element vectors)`
      : undefined,
  dK: (s) => (s % 2 !== 0 ? 'must be even (dK/dV are stored in element pairs)' : undefined),
  dV: (s) => (s % 2 !== 0 ? 'must be even (dK/dV are stored in element pairs)' : undefined),
};

/**
 * Every stride of `p` (batch strides skipped in group mode) that breaks `loads` (the operator's
 * rules for Q, K, V, dO) or the shared rules, then every O/dQ/dK/dV row stride beyond int32.
 */
export function fmhaBwdStrideProblems(p: CheckedFmhaBwdProblem, loads: FmhaBwdStrideRule): FmhaBwdStrideProblem[] {
  const out: FmhaBwdStrideProblem[] = [];
  const rules: [FmhaBwdTensor, FmhaBwdStrideRule][] = [
    ...(['q', 'k', 'v', 'dO'] as const).map((t): [FmhaBwdTensor, FmhaBwdStrideRule] => [t, loads]),
    ...(Object.entries(SHARED_RULES) as [FmhaBwdTensor, FmhaBwdStrideRule][]),
  ];
  for (const [tensor, rule] of rules)
    for (const stride of ['row', 'head', 'batch'] as const) {
      if (stride === 'batch' && p.mode === 'group') continue;
      const value = p.strides[tensor][stride];
      const why = rule(value, stride);
      if (why !== undefined) out.push({ tensor, stride, value, rule: why });
    }
  for (const tensor of ['o', 'dQ', 'dK', 'dV'] as const) {
    const value = p.strides[tensor].row;
    if (value > INT32_ROW) out.push({ tensor, stride: 'row', value, rule: 'exceeds int32' });
  }
  return out;
}
