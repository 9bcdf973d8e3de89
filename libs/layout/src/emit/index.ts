export { composeTensorAdaptor, type ComposedIndex } from './compose.ts';
export { emitCalculateBottomIndex, emitCalculateOffset, type EmittedIndex, type EmittedOffset } from './emitOffset.ts';
export {
  EmittedCoordinate,
  emitCoordinateValid,
  emitMakeTensorCoordinate,
  emitMoveTensorCoordinate,
  storedHiddenDims,
} from './emitCoordinate.ts';
export { IndexEmitter, indexTypeFor, magnitudeBound, type IndexEmitterOptions, type MagicSource, type TempMemo } from './indexEmitter.ts';
