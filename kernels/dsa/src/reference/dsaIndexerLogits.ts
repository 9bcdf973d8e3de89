// Indexer logits with the per-element error bound a GPU result is compared under.

/**
 * Reference indexer logits and, per element, how far a correct GPU result may be from them
 * (see {@link dsaIndexerPrefillReferenceWithBound} for the rule and {@link compareDsaLogits} for its use).
 */
export interface DsaIndexerLogits {
  /** [rows][cols] fp32 logits: the float64 result rounded once; −∞ where masked. */
  readonly logits: Float32Array;
  /** [rows][cols] the allowed |GPU − reference| where the logit is finite; 0 where masked (−∞ must match exactly). */
  readonly errorBound: Float64Array;
}
