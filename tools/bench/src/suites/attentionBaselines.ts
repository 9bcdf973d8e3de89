// The torch baselines whose error against the fp32 reference sets an attention case's tolerance
// (SuiteCase.errorBaselines, in preference order), by the names REFERENCE_OPS.md gives them.

/** The three SDPA backends, each forced on its own. */
export const SDPA_ERROR_BASELINES: readonly string[] = Object.freeze(['torch-flash', 'torch-cudnn', 'torch-efficient']);

/** Varlen: the backends on jagged nested tensors, then the ones that rejected those, looped over the sequences. */
export const SDPA_VARLEN_ERROR_BASELINES: readonly string[] = Object.freeze([
  ...SDPA_ERROR_BASELINES,
  ...SDPA_ERROR_BASELINES.map((name) => `${name}-looped`),
]);
