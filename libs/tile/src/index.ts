// @tilekit/tile: CK-tile tile distributions (encodings, their adaptors and builders) and hardware
// fragment layouts (mma.sync, ldmatrix, wgmma, MFMA) expressed as encodings.
export * from './errors.ts';
export {
  checkIndex,
  hRef,
  joinMixedRadix,
  makeTileDistributionEncoding,
  rRef,
  splitMixedRadix,
  TileDistributionEncoding,
  type DigitOwner,
  type RhRef,
  type SpanDigit,
  type TileDistributionEncodingSpec,
  type TileOwner,
} from './tileDistributionEncoding.ts';
export { embedEncoding } from './embedEncoding.ts';
export { reduceEncoding, type ReducedDigit, type ReducedEncoding } from './reduceEncoding.ts';
export { sliceEncoding, type SlicedEncoding } from './sliceEncoding.ts';
export { permuteEncodingXs } from './permuteEncodingXs.ts';
export { makeVectorLoadEncoding, makeWarpGridEncoding, type VectorLoadSpec, type WarpGridSpec, type WarpGridX } from './blockEncodings.ts';
export * from './atoms/index.ts';
export { spaceFillingCurve } from './spaceFillingCurve.ts';
export { BlockEmitter, RegisterArray, type BlockEmitterOptions, type ThreadScope, type TileDialectName } from './blockEmitter.ts';
export {
  castTile,
  clearTile,
  DistributedTensor,
  emitPartitionIndex,
  emitXIndex,
  makeDistributedTensor,
  setTile,
  sweepOrder,
  sweepTile,
  tileElementwise,
  zeroOf,
  type SweptElement,
  type ThreadBuffers,
} from './distributedTensor.ts';
export {
  emitTileWindowAccesses,
  evaluateLoadTile,
  evaluateStoreTile,
  evaluateUpdateTile,
  knownMultiple,
  loadStoreTraits,
  loadTile,
  makeTensorView,
  makeTileWindow,
  moveTileWindow,
  sliceTileWindow,
  storeTile,
  TileWindow,
  updateTile,
  type LoadStoreTraits,
  type MemorySpace,
  type TensorView,
  type TileWindowAccess,
  type TileWindowSpec,
  type WindowValue,
} from './tileWindow.ts';
export { shufflePermutation, shuffleTile } from './shuffleTile.ts';
export { getSliceTile, makeSliceTile, setSliceTile, sliceTileMap } from './sliceTile.ts';
export {
  blockReducePlan,
  blockTileReduce,
  evaluateBlockReduce,
  reduceMax,
  reduceMin,
  reduceSum,
  type CrossThreadStep,
  type ReduceOp,
} from './blockReduce.ts';
export { emitBlockExclusiveScan, type BlockScan, type BlockScanOptions, type BlockScanSite, type BlockScanVariant } from './blockScan.ts';
