// The kernel parameters every attention-forward kernel (the sm_90a TMA/wgmma one and the sm_80
// cp.async/mma.sync one) takes under the same names and in the same order after its Q/K/V inputs:
// where O and LSE go, the sequences (batch or group mode), GQA, the scale and the window mask.
// One list keeps the packed layouts, and the prologue that reads them, the same in both.
import { float32, int32, kernelParam, type PointerParam } from '@tilekit/codegen';

/** Largest sequence length and head count a kernel parameter may carry. */
export const FMHA_MAX_SEQLEN = 2 ** 30;

/**
 * The forward kernels' shared parameters, in declaration order, with `o` (the output pointer:
 * O's element type, or fp32 for a split-KV workspace) as given: O's row stride (elements, `int`)
 * and head/batch strides, the nullable LSE pointer and strides, seqlen_q/k, the nullable group
 * mode arrays (seqstart_q/k, seqlen_k_ptr), the query-per-key head ratio, scale·log2 e and the
 * window mask (left/right sizes, -1 = unbounded; top-left or bottom-right alignment).
 */
export function fmhaFwdTileParams(o: PointerParam) {
  const count = { range: [0, FMHA_MAX_SEQLEN] as const };
  const big = { range: [0, 2 ** 50] as const };
  return {
    o,
    o_stride_row: kernelParam.i32({ range: [1, 2 ** 31 - 1] }),
    o_stride_head: kernelParam.i64(big),
    o_stride_batch: kernelParam.i64(big),
    lse: kernelParam.pointer(float32, { align: 4, nullable: true }),
    lse_stride_head: kernelParam.i64(big),
    lse_stride_batch: kernelParam.i64(big),
    seqlen_q: kernelParam.i32(count),
    seqlen_k: kernelParam.i32(count),
    seqstart_q: kernelParam.pointer(int32, { const: true, align: 4, nullable: true }),
    seqstart_k: kernelParam.pointer(int32, { const: true, align: 4, nullable: true }),
    seqlen_k_ptr: kernelParam.pointer(int32, { const: true, align: 4, nullable: true }),
    nhead_ratio: kernelParam.i32({ range: [1, 1 << 16] }),
    scale_log2: kernelParam.f32(),
    mask_left: kernelParam.i32({ range: [-1, FMHA_MAX_SEQLEN] }),
    mask_right: kernelParam.i32({ range: [-1, FMHA_MAX_SEQLEN] }),
    mask_top_left: kernelParam.i32({ range: [0, 1] }),
  };
}
