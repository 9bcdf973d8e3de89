import type { BlockBuilder, CType, Expr } from '@tilekit/codegen';
import type { BlockEmitter, DistributedTensor } from '@tilekit/tile';
import type { FmhaFwdInt8Scales, FmhaFwdWsPolicy } from './fmhaFwdWsPipeline.ts';

/** What the operand's dequantize step works on, per key tile. */
export interface FmhaFwdQkDequantizeStep {
  /** S as float (written), and the Q·Kᵀ accumulator in the operand's {@link FmhaFwdQkOperand.accumulator} type (read). */
  readonly sAcc: DistributedTensor;
  readonly sRaw: DistributedTensor;
  /** The softmax scale · log2 e. */
  readonly scaleLog2: Expr;
  /** The kernel's dequantization scales. */
  readonly scales: FmhaFwdInt8Scales;
  /** The first key row of the tile. */
  readonly j0: Expr;
}

/**
 * A Q·Kᵀ operand transform of the sm_90a forward pipeline, the hook a policy carries (Sparge's int8
 * Q·Kᵀ): Q and K arrive in another element type than `dtype`, S = Q·Kᵀ runs as a wgmma of that type
 * into its own accumulator, and a dequantize step turns it into float S with the tile's scales
 * joined to the softmax scale. Without one, Q and K have the policy's `dtype`.
 */
export interface FmhaFwdQkOperand {
  /** Instance-name tag, the element type of Q and K (`int8`). */
  readonly tag: 'int8';
  /** The element type of the Q·Kᵀ wgmma. */
  readonly gemmDtype: 'int8';
  /** The type of S's raw accumulator. */
  readonly accumulator: CType;
  /** Head-dim elements per Q·Kᵀ wgmma group (and per swizzled row of Q and K in shared memory). */
  tileK(headDim: number): number;
  /** Throws BlockGemmPolicyError when `policy` cannot carry the operand. */
  check(policy: FmhaFwdWsPolicy): void;
  /** Raw S to float; returns the softmax scale with the tile's dequantization scales joined (consumer threads `inner` on `l`). */
  dequantize(l: BlockBuilder, inner: BlockEmitter, step: FmhaFwdQkDequantizeStep): Expr;
}
