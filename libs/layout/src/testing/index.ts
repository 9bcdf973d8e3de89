export {
  allIndices,
  bindingsArb,
  buildRandomDescriptor,
  descriptorArb,
  descriptorCaseArb,
  indexArb,
  transformArb,
  transformCaseArb,
  type DescriptorArbOptions,
  type RandomDescriptor,
  type RandomStage,
  type RandomTransformKind,
} from './arbitraries.ts';
export { interpretFunction } from './interpretFunction.ts';
export { buildEmissionCase, caseArgs, encode, randomInputs, seededRandom, type EmissionCase } from './emissionCases.ts';
