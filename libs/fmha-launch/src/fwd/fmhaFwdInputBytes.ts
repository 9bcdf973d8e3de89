// The bytes of Q, K and V a forward attention launch reads.
import { attentionTensorSpan, type FmhaFwdLaunchProblem } from '@tilekit/fmha';
import { getDType } from '@tilekit/numeric';

/** Bytes of Q, K and V a launch reads: their strided spans (group mode one "batch"). */
export function fmhaFwdInputBytes(p: FmhaFwdLaunchProblem): { readonly q: number; readonly k: number; readonly v: number } {
  const e = getDType(p.dtype).bytes;
  const batches = p.mode === 'group' ? 1 : p.batch;
  return {
    q: attentionTensorSpan(p.qStrides, batches, p.nheadQ, p.rowsQ, p.hdimQ) * e,
    k: attentionTensorSpan(p.kStrides, batches, p.nheadK, p.rowsK, p.hdimQ) * e,
    v: attentionTensorSpan(p.vStrides, batches, p.nheadK, p.rowsK, p.hdimV) * e,
  };
}
