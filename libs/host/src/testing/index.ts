export { applyViewChain, hostTensorArb, permutationArb, shapeArb, viewChainArb } from './arbitraries.ts';
export type { HostTensorArbOptions, ShapeArbOptions, ViewStep } from './arbitraries.ts';
