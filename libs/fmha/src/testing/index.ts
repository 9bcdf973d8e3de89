// Test helpers of @tilekit/fmha for other packages' specs (they need fast-check).
export * from './randomAttentionSequences.ts';
