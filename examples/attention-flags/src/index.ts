// @tilekit/example-attention-flags: the command-line flags the attention examples share. Re-exports only.
export * from './attentionExampleFlags.ts';
