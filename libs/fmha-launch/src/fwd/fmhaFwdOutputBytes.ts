// The bytes of O and LSE a one-pass forward attention launch writes.
import { attentionTensorSpan, type FmhaFwdLaunchProblem } from '@tilekit/fmha';
import { getDType } from '@tilekit/numeric';

/** Bytes of O (its strided span) and LSE (fp32, `lseStrides`; 0 when the problem writes none) a one-pass launch writes. */
export function fmhaFwdOutputBytes(p: FmhaFwdLaunchProblem): { readonly o: number; readonly lse: number } {
  const e = getDType(p.dtype).bytes;
  const batches = p.mode === 'group' ? 1 : p.batch;
  const lse = p.lse ? ((batches - 1) * p.lseStrides.batch + (p.nheadQ - 1) * p.lseStrides.head + p.rowsQ) * 4 : 0;
  return { o: attentionTensorSpan(p.oStrides, batches, p.nheadQ, p.rowsQ, p.hdimV) * e, lse };
}
