// @tilekit/fmha: attention in CK-tile's layers. Re-exports only, by concept.
export * from './mask/index.ts';
export * from './reference/index.ts';
export * from './errors.ts';
export * from './softmax/index.ts';
export * from './pipeline/index.ts';
export * from './scoreMod/index.ts';
export * from './bwd/index.ts';
export * from './problem/index.ts';
export * from './varlen/index.ts';
export * from './fwd/index.ts';
