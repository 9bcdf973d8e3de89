export { ArgumentError, formatArgumentProblem, TilekitError, type ArgumentErrorClass, type ArgumentProblem } from './tilekitError.ts';
export { ArgumentProblems } from './argumentProblems.ts';
export {
  dtypeNames,
  dtypes,
  getDType,
  isDTypeName,
  resolveDType,
  type CppHeaders,
  type CppNames,
  type DType,
  type DTypeName,
} from './dtype.ts';
export {
  defaultEncodeOptions,
  resolveEncodeOptions,
  roundings,
  type EncodeOptions,
  type ResolvedEncodeOptions,
  type Rounding,
} from './rounding.ts';
export { decode, decodeBigInt, encode, encodeBigInt, roundTo } from './conversion.ts';
export {
  allocStorage,
  decodeArray,
  encodeArray,
  setStorageElement,
  storageConstructorOf,
  storageElement,
  type Storage,
  type StorageByDType,
} from './storage.ts';
export { absoluteThreshold, defaultTolerance, relativeThreshold, type Tolerance } from './tolerance.ts';
export {
  decodeFloatBits,
  defineFloatFormat,
  encodeFloatBits,
  isNaNBits,
  type FloatFormat,
  type FloatFormatSpec,
  type FloatSpecials,
} from './floatFormat.ts';
export { float32Format } from './float32.ts';
export { float16Format } from './float16.ts';
export { bfloat16Format } from './bfloat16.ts';
export { float8e4m3fnFormat, float8e5m2Format } from './float8.ts';
export { float8e4m3fnuzFormat, float8e5m2fnuzFormat } from './float8Fnuz.ts';
export { int32Format, int64Format, int8Format, uint8Format, type IntegerFormat } from './integer.ts';
