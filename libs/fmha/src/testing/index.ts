// Test helpers of @tilekit/fmha for other packages' specs (they need fast-check).
export * from './attentionProblemSequences.ts';
export * from './groupModeForwardBytes.ts';
export * from './randomAttentionHeads.ts';
export * from './randomAttentionLayouts.ts';
export * from './randomAttentionMask.ts';
export * from './randomAttentionSequences.ts';
export * from './fmhaFwdTestLaunch.ts';
export { fmhaFwdWsTestPolicy } from './fmhaFwdWsTestPolicy.ts';
