// The policy checks the sm_80 split-D pipelines (FFPA's forward and backward) share: a rule broken
// as a `BlockGemmPolicyError` naming the pipeline and field, and the operand rules both start with.
import { BlockGemmPolicyError } from '@tilekit/gemm';

/** A policy rule of `pipeline` broken: throws a `BlockGemmPolicyError` naming the pipeline and the field `what`. */
export function splitDPolicyError(pipeline: string, what: string, rule: string, found: unknown): never {
  throw new BlockGemmPolicyError(`${pipeline} ${what}`, rule, String(found));
}

/** `x` is a safe integer multiple of `step` in [lo, hi]. */
export const isMultipleIn = (x: number, step: number, lo: number, hi: number): boolean =>
  Number.isSafeInteger(x) && x % step === 0 && x >= lo && x <= hi;

/** The first rules of a split-D policy: dtype fp16 or bf16, headDim (Q, K) a multiple of 64 in [64, 1024]. */
export function checkSplitDOperands(pipeline: string, dtype: string, headDim: number): void {
  if (dtype !== 'fp16' && dtype !== 'bf16') splitDPolicyError(pipeline, 'dtype', 'must be fp16 or bf16', dtype);
  if (!isMultipleIn(headDim, 64, 64, 1024)) splitDPolicyError(pipeline, 'headDim', 'must be a multiple of 64 in [64, 1024]', headDim);
}
