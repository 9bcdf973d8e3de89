// What every attention problem shares: the resolved shape of a checked problem and the field
// checks (ranges, seqstarts, layouts, strides, mask, scale) each operator binds to its own error.
export * from './attentionProblemFields.ts';
export * from './checkedAttentionProblem.ts';
export * from './attentionProblemChecks.ts';
