// The policy checks of the pipeline specs: what a constructor refusing a policy says.
import { BlockGemmPolicyError } from '@tilekit/gemm';

/** The message of the `BlockGemmPolicyError` that `construct` throws (any other error is rethrown; none is an error). */
export function blockGemmPolicyErrorOf(construct: () => unknown): string {
  try {
    construct();
  } catch (e) {
    if (e instanceof BlockGemmPolicyError) return e.message;
    throw e;
  }
  throw new Error('no error thrown');
}
