export { ArgParseError, ArgParser, ParsedArgs, runCli } from './argParser.ts';
export type { FlagKind, FlagRule, FlagSpec, NumberBounds, TextCheck } from './argParser.ts';
export { formatUserError, isUserError, runCommand, USER_ERROR_EXIT_CODE } from './runCommand.ts';
export type { CliIo } from './runCommand.ts';
export { flagErrorOf } from './flagErrorOf.ts';
export { checkErr } from './checkErr.ts';
export type { CheckErrFailure, CheckErrOptions, CheckErrResult } from './checkErr.ts';
export { fillDefaults, fillTensor, fillValues, formatFillSpec, parseFillSpec } from './fill.ts';
export type { FillKind, FillSpec } from './fill.ts';
export { HostTensor, NonContiguousError } from './hostTensor.ts';
export type { FromStorageOptions, HostTensorOptions } from './hostTensor.ts';
export { DEFAULT_SEED, Prng, SplitMix64, seedToUint64 } from './prng.ts';
export type { Seed } from './prng.ts';
export { randomBits16 } from './randomBits16.ts';
export {
  checkIndex,
  checkPermutation,
  checkShape,
  formatShape,
  inversePermutation,
  ravelIndex,
  rowMajorStrides,
  shapeSize,
  unravelIndex,
} from './shape.ts';
export { formatMarkdownTable, formatTable } from './table.ts';
export type { Align, Cell, TableOptions } from './table.ts';
export { gbPerSec, summarizeTimes, tflops } from './timing.ts';
export type { TimeSummary } from './timing.ts';
