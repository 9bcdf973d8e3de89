// Batch and group (varlen) mode sequences: group-mode starts from lengths, and the row kernels'
// per-block sequence prologue.
export * from './rowTileSequence.ts';
export * from './seqstartsOf.ts';
