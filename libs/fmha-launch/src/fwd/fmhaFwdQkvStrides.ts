// The element strides of a forward problem's Q, K and V, one by one, for the instances' predicates.
import type { FmhaFwdLaunchProblem } from '@tilekit/fmha';

/** One element stride of Q, K or V, named as the predicates' messages name it (`q row`, `k head`, …). */
export interface FmhaFwdQkvStride {
  readonly name: 'q' | 'k' | 'v';
  readonly what: 'row' | 'head' | 'batch';
  readonly stride: number;
}

/** Every Q/K/V element stride of `p`, in order: q row, head, batch, then k's, then v's. */
export function fmhaFwdQkvStrides(p: Pick<FmhaFwdLaunchProblem, 'qStrides' | 'kStrides' | 'vStrides'>): FmhaFwdQkvStride[] {
  const out: FmhaFwdQkvStride[] = [];
  for (const [name, s] of [
    ['q', p.qStrides],
    ['k', p.kStrides],
    ['v', p.vStrides],
  ] as const) {
    for (const what of ['row', 'head', 'batch'] as const) out.push({ name, what, stride: s[what] });
  }
  return out;
}
