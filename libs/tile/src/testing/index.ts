export { encodingArb, type EncodingArbOptions } from './arbitraries.ts';
export { allIndices, bijectionModuloRViolation, ownershipByEnumeration, referenceRIndex, referenceXIndex } from './bruteForce.ts';
export { fragmentTableViolation, type FragmentCell } from './fragmentTables.ts';
export { runHostTileCalls, type HostTileCall } from './hostTileHarness.ts';
export { emitStagedCopy, type StagedCopy } from './stagedCopy.ts';
