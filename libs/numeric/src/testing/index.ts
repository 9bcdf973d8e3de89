export { dtypeNameArbitrary, floatDTypeNameArbitrary, inRangeArbitrary, representableArbitrary } from './arbitraries.ts';
export { nextDown, nextUp } from './float64Neighbours.ts';
