// The CPU references of attention forward (blocked float64 and a naive independent formula), their
// tensor layouts and arguments, and the tolerance for comparing a kernel with them.
export * from './attentionTensorLayout.ts';
export * from './attentionFwdArgs.ts';
export * from './attentionScoreModifier.ts';
export * from './referenceAttentionFwd.ts';
export * from './naiveAttentionFwd.ts';
export * from './attentionFwdTolerance.ts';
export * from './attentionBwdArgs.ts';
export * from './referenceAttentionBwd.ts';
export * from './attentionBwdTolerance.ts';
