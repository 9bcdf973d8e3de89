// Attention masks with CK-tile's generic semantics: specs and CK's `-mask=` strings, the TS model
// (ground truth and tile queries) and its emitted twin.
export * from './attentionMaskSpec.ts';
export * from './genericAttentionMask.ts';
export * from './genericAttentionMaskCode.ts';
