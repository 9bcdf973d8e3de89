export {
  checkArity,
  TransformBase,
  type Transform,
  type TransformKind,
  type TransformStep,
  type VectorLengthsStrides,
} from './transform.ts';
export { embed, Embed } from './embed.ts';
export { freeze, Freeze } from './freeze.ts';
export { insert, Insert } from './insert.ts';
export { leftPad, LeftPad } from './leftPad.ts';
export { merge, Merge } from './merge.ts';
export { modulo, Modulo } from './modulo.ts';
export { offset, Offset } from './offset.ts';
export { pad, Pad } from './pad.ts';
export { passThrough, PassThrough } from './passThrough.ts';
export { replicate, Replicate } from './replicate.ts';
export { rightPad, RightPad } from './rightPad.ts';
export { slice, Slice } from './slice.ts';
export { unmerge, Unmerge } from './unmerge.ts';
export { xor, Xor } from './xor.ts';
