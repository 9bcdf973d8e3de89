// The (row, head, batch) stride parameters of a pointer-addressed attention tensor, as the sm_80
// forward and the backward dq_dk_dv kernels name them.
import { kernelParam, type RangeLike } from '@tilekit/codegen';

/** `<name>_stride_row` (elements, `int`, in `rowStride`), `<name>_stride_head` and `<name>_stride_batch` (elements, int64). */
export function fmhaRowStrideParams<N extends string>(name: N, rowStride: RangeLike) {
  const big = { range: [0, 2 ** 50] as const };
  return {
    [`${name}_stride_row`]: kernelParam.i32({ range: rowStride }),
    [`${name}_stride_head`]: kernelParam.i64(big),
    [`${name}_stride_batch`]: kernelParam.i64(big),
  } as Record<`${N}_stride_row`, ReturnType<typeof kernelParam.i32>> &
    Record<`${N}_stride_head` | `${N}_stride_batch`, ReturnType<typeof kernelParam.i64>>;
}
