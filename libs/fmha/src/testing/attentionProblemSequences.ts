// The sequence fields of a problem drawn by the operators' randomized GPU specs, from drawn sequences
// and back (for the cost of a replayed problem).
import { seqstartsOf } from '../varlen/seqstartsOf.ts';
import type { AttentionRandomSequences } from './randomAttentionSequences.ts';

/** A problem's sequence fields: seqlenQ/seqlenK (batch mode) or seqstartQ/seqstartK (group mode). */
export type AttentionProblemSequences =
  { readonly seqlenQ: number; readonly seqlenK: number } | { readonly seqstartQ: number[]; readonly seqstartK: number[] };

/** The problem fields of drawn sequences: group mode's seqstarts, or batch mode's one length pair. */
export function attentionProblemSequences(s: AttentionRandomSequences): AttentionProblemSequences {
  return s.group ? { seqstartQ: seqstartsOf(s.sq), seqstartK: seqstartsOf(s.sk) } : { seqlenQ: s.sq[0]!, seqlenK: s.sk[0]! };
}

/** The sequence fields of a problem as `attentionSequencesOf` reads them. */
export interface AttentionProblemSequenceFields {
  readonly batch: number;
  readonly seqlenQ?: number;
  readonly seqlenK?: number | readonly number[];
  readonly seqstartQ?: readonly number[];
  readonly seqstartK?: readonly number[];
}

/** Per-sequence lengths of seqstarts: the differences of neighbours. */
function lengthsOf(seqstart: readonly number[]): number[] {
  return seqstart.slice(1).map((e, b) => e - seqstart[b]!);
}

/** The sequences of a problem (group mode: the seqstart slots; batch mode: seqlenK defaults to seqlenQ). */
export function attentionSequencesOf(p: AttentionProblemSequenceFields): AttentionRandomSequences {
  if (p.seqstartQ !== undefined && p.seqstartK !== undefined) {
    return { group: true, batch: p.batch, sq: lengthsOf(p.seqstartQ), sk: lengthsOf(p.seqstartK) };
  }
  return { group: false, batch: p.batch, sq: [p.seqlenQ ?? 0], sk: [Number(p.seqlenK ?? p.seqlenQ ?? 0)] };
}
