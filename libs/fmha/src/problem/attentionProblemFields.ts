// The input fields every attention problem names (the forward and backward operators' problems and
// the CPU reference's arguments): batch, heads, head dims and the batch- or group-mode sequences.
// Each operator's problem extends it with its dtype, layouts, strides and options.
import type { AttentionSequenceFields } from './attentionProblemChecks.ts';

/**
 * Shape of an attention problem as given: query head h reads key/value head ⌊h / (nheadQ / nheadK)⌋
 * (GQA/MQA when nheadK < nheadQ). Batch mode gives `seqlenQ`/`seqlenK`; group (varlen) mode
 * `seqstartQ`/`seqstartK` (batch + 1 entries from 0, non-decreasing).
 */
export interface AttentionProblemFields extends AttentionSequenceFields {
  readonly batch: number;
  readonly nheadQ: number;
  /** Default nheadQ; must divide it. */
  readonly nheadK?: number;
  readonly hdimQ: number;
  /** Default hdimQ (unless the operator says otherwise). */
  readonly hdimV?: number;
}
