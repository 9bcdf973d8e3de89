// The kernel parameters the backward dq_dk_dv kernels (the dense sm_90a one and FFPA's split-D
// sm_80 one) take under the same names and in the same order after their Q/K/V/dO inputs.
import { float32, int32, kernelParam, uint8, type CType, type RangeLike } from '@tilekit/codegen';
import { fmhaRowStrideParams } from './fmhaRowStrideParams.ts';

/** Limits of the dq_dk_dv parameters: the longest sequence, and the range of dK/dV's row strides. */
export interface FmhaBwdDqDkDvParamLimits {
  readonly maxSeqlen: number;
  readonly outputRowStride: RangeLike;
}

/**
 * The dq_dk_dv kernels' shared parameters, in declaration order, for dK/dV of type `element`: LSE
 * and D (fp32, with their head/batch strides), dK and dV with their strides, the unified workspace
 * (bytes), batch, query heads, the query-per-key head ratio, seqlen_q/k, the nullable group mode
 * arrays (seqstart_q/k, seqlen_k_ptr), scale, scale·log2 e and the window mask (left/right sizes,
 * -1 = unbounded; top-left or bottom-right alignment).
 */
export function fmhaBwdDqDkDvParams(element: CType, limits: FmhaBwdDqDkDvParamLimits) {
  const count = { range: [0, limits.maxSeqlen] as const };
  const big = { range: [0, 2 ** 50] as const };
  return {
    lse: kernelParam.pointer(float32, { const: true, align: 4 }),
    d: kernelParam.pointer(float32, { const: true, align: 4 }),
    lse_stride_head: kernelParam.i64(big),
    lse_stride_batch: kernelParam.i64(big),
    dk: kernelParam.pointer(element, { align: 4 }),
    dv: kernelParam.pointer(element, { align: 4 }),
    ...fmhaRowStrideParams('dk', limits.outputRowStride),
    ...fmhaRowStrideParams('dv', limits.outputRowStride),
    workspace: kernelParam.pointer(uint8, { align: 16 }),
    batch: kernelParam.i32({ range: [1, 65535] }),
    nhead_q: kernelParam.i32({ range: [1, 65535] }),
    nhead_ratio: kernelParam.i32({ range: [1, 65535] }),
    seqlen_q: kernelParam.i32(count),
    seqlen_k: kernelParam.i32(count),
    seqstart_q: kernelParam.pointer(int32, { const: true, align: 4, nullable: true }),
    seqstart_k: kernelParam.pointer(int32, { const: true, align: 4, nullable: true }),
    seqlen_k_ptr: kernelParam.pointer(int32, { const: true, align: 4, nullable: true }),
    scale: kernelParam.f32(),
    scale_log2: kernelParam.f32(),
    mask_left: kernelParam.i32({ range: [-1, limits.maxSeqlen] }),
    mask_right: kernelParam.i32({ range: [-1, limits.maxSeqlen] }),
    mask_top_left: kernelParam.i32({ range: [0, 1] }),
  };
}
