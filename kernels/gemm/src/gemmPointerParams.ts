// The kernel parameters of the GEMM kernels that take A, B and C as plain pointers (the sm_80 and
// gfx942 families; the sm_90a one takes TMA tensor maps instead).
import { kernelParam, type CType } from '@tilekit/codegen';
import { GEMM_MAX_DIM } from './gemmProblem.ts';

/**
 * `a`, `b` (const) and `c` pointers to `element` with the given address alignments (bytes), then
 * `m n k lda ldb ldc` (`int`, 1 … GEMM_MAX_DIM) and `batch_stride_a/b/c` (`long long`, 0 … 2^50), in
 * this order (the entry point's parameter layout).
 */
export function gemmPointerParams(element: CType, align: { readonly ab: number; readonly c: number }) {
  const dim = { range: [1, GEMM_MAX_DIM] as const };
  const stride = { range: [0, 2 ** 50] as const };
  return {
    a: kernelParam.pointer(element, { const: true, align: align.ab }),
    b: kernelParam.pointer(element, { const: true, align: align.ab }),
    c: kernelParam.pointer(element, { align: align.c }),
    m: kernelParam.i32(dim),
    n: kernelParam.i32(dim),
    k: kernelParam.i32(dim),
    lda: kernelParam.i32(dim),
    ldb: kernelParam.i32(dim),
    ldc: kernelParam.i32(dim),
    batch_stride_a: kernelParam.i64(stride),
    batch_stride_b: kernelParam.i64(stride),
    batch_stride_c: kernelParam.i64(stride),
  };
}
