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
