// @tilekit/layout: CK-tile's layout algebra (coordinate transforms, adaptors, descriptors,
// coordinates) evaluated in TypeScript and emitted as straight-line C++.
export * as sym from './symbolic/index.ts';
export { evaluateSymInt, NO_BINDINGS, type Bindings } from './symbolic/evaluate.ts';
export { formatSymInt, isStatic, SymExpr, symEquals, type SymbolDomain, type SymInt } from './symbolic/expr.ts';
export { INT32_MAX, symbol } from './symbolic/symbol.ts';
export * from './transforms/index.ts';
export { BoundTensorAdaptor, chainTensorAdaptors, makeSingleStageTensorAdaptor, TensorAdaptor, transformTensorAdaptor } from './adaptor.ts';
export {
  BoundTensorDescriptor,
  makeNaiveTensorDescriptor,
  makeNaiveTensorDescriptorAligned,
  makeNaiveTensorDescriptorPacked,
  padTensorDescriptor,
  TensorDescriptor,
  transformTensorDescriptor,
  type NaiveVectorGuarantee,
} from './descriptor.ts';
export { checkTensorIndex } from './checkTensorIndex.ts';
export {
  coordinateHasValidOffset,
  coordinateHasValidOffsetAssumingTopIndexIsValid,
  makeTensorAdaptorCoordinate,
  makeTensorCoordinate,
  moveTensorAdaptorCoordinate,
  moveTensorCoordinate,
  TensorAdaptorCoordinate,
  TensorCoordinate,
} from './coordinate.ts';
export * from './errors.ts';
export * from './emit/index.ts';
export {
  magicDivide,
  magicNumbers,
  MAGIC_DIVISION_MAX_DIVIDEND,
  MAGIC_DIVISION_MAX_DIVISOR,
  mulhi32,
  type MagicNumbers,
} from './magicDivision.ts';
