// The FLOPs of a forward attention problem, as the benchmarks count them.
import { isCausalMask } from '../mask/attentionMaskSpec.ts';
import type { CheckedFmhaFwdProblem } from './fmhaFwdProblem.ts';

/** Per batch: query rows and keys used. */
function sequences(p: CheckedFmhaFwdProblem): { readonly sq: number; readonly sk: number }[] {
  if (p.mode === 'batch') return Array.from({ length: p.batch }, () => ({ sq: p.seqlenQ, sk: p.seqlenK }));
  return p.seqlensK.map((sk, b) => ({ sq: p.seqstartQ[b + 1]! - p.seqstartQ[b]!, sk }));
}

/**
 * FLOPs as docs/benchmarks.md counts them: Σ over batches of 2·nheadQ·sq·sk·(hdimQ + hdimV), halved
 * for a causal mask when sq = sk (other masks count the full product, as CK's example does).
 */
export function fmhaFwdProblemFlops(p: CheckedFmhaFwdProblem): number {
  const causal = isCausalMask(p.mask);
  return sequences(p).reduce((sum, { sq, sk }) => sum + (2 * p.nheadQ * sq * sk * (p.hdimQ + p.hdimV)) / (causal && sq === sk ? 2 : 1), 0);
}
