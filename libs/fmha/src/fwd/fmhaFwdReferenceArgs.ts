// The CPU reference's arguments for a checked forward attention problem.
import type { AttentionFwdArgs } from '../reference/attentionFwdArgs.ts';
import type { AttentionTensorStrides } from '../reference/attentionTensorLayout.ts';
import type { CheckedFmhaFwdProblem } from './fmhaFwdProblem.ts';

/**
 * The CPU reference's arguments (`referenceAttentionFwd` of @tilekit/fmha) for a checked problem
 * and its host storage (fp16/bf16 bit patterns in Q/K/V's strides): same shapes, strides, scale
 * (the fp32 value the kernel gets) and mask; O in the problem's output strides; LSE in the same
 * layout as the kernel's (`lseStrides`).
 */
export function fmhaFwdReferenceArgs(
  p: CheckedFmhaFwdProblem,
  data: { readonly q: Uint16Array; readonly k: Uint16Array; readonly v: Uint16Array },
): AttentionFwdArgs {
  const operand = (d: Uint16Array, strides: AttentionTensorStrides) => ({ dtype: p.dtype, data: d, strides });
  const mode =
    p.mode === 'group'
      ? { seqstartQ: p.seqstartQ, seqstartK: p.seqstartK, ...(p.hasSeqlenK ? { seqlenK: p.seqlensK } : {}) }
      : { seqlenQ: p.seqlenQ, seqlenK: p.seqlenK };
  return {
    batch: p.batch,
    nheadQ: p.nheadQ,
    nheadK: p.nheadK,
    hdimQ: p.hdimQ,
    hdimV: p.hdimV,
    ...mode,
    q: operand(data.q, p.qStrides),
    k: operand(data.k, p.kStrides),
    v: operand(data.v, p.vStrides),
    oStrides: p.oStrides,
    scale: p.scale,
    mask: p.mask,
  };
}
