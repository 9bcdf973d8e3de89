export { applyViewChain, hostTensorArb, permutationArb, shapeArb, viewChainArb } from './arbitraries.ts';
export type { HostTensorArbOptions, ShapeArbOptions, ViewStep } from './arbitraries.ts';
export { badFlagTokens } from './badFlagTokens.ts';
export type { BadFlagToken } from './badFlagTokens.ts';
export { captureCli } from './captureCli.ts';
export type { CliCapture } from './captureCli.ts';
