// The elements each tensor of a forward attention problem spans, in its strides.
import { attentionTensorSpan, type AttentionTensorStrides } from '../reference/attentionTensorLayout.ts';
import type { CheckedFmhaFwdProblem } from './fmhaFwdProblem.ts';

/** Elements each tensor spans (Q, K, V, O in their strides; LSE per (batch, head, row)). */
export function fmhaFwdOperandElements(p: CheckedFmhaFwdProblem): {
  readonly q: number;
  readonly k: number;
  readonly v: number;
  readonly o: number;
  readonly lse: number;
} {
  const batches = p.mode === 'group' ? 1 : p.batch;
  const span = (s: AttentionTensorStrides, nhead: number, rows: number, hdim: number): number =>
    attentionTensorSpan(s, batches, nhead, rows, hdim);
  return {
    q: span(p.qStrides, p.nheadQ, p.rowsQ, p.hdimQ),
    k: span(p.kStrides, p.nheadK, p.rowsK, p.hdimQ),
    v: span(p.vStrides, p.nheadK, p.rowsK, p.hdimV),
    o: span(p.oStrides, p.nheadQ, p.rowsQ, p.hdimV),
    lse: batches * p.nheadQ * p.rowsQ,
  };
}
