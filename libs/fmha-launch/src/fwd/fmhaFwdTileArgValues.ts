// The values of the kernel parameters every forward attention kernel shares (`fmhaFwdTileParams`).
import type { AttentionTensorStrides, FmhaFwdLaunchProblem } from '@tilekit/fmha';
import { checkFmhaFwdSequenceBuffers } from './checkFmhaFwdSequenceBuffers.ts';
import type { FmhaFwdBuffers } from './fmhaFwdBuffers.ts';

/**
 * The values of the parameters every forward kernel shares (`fmhaFwdTileParams`, same names and
 * order): O and LSE (pointers and strides; batch strides 0 in group mode, where one "batch" holds
 * every sequence's rows), the sequences (group mode: `seqstartQ`/`seqstartK` checked and passed,
 * `seqlenK` when given), GQA, scale·log2 e and the window. Throws ArgumentError for a missing or
 * short seqstart buffer.
 */
export function fmhaFwdTileArgValues(
  p: FmhaFwdLaunchProblem,
  buffers: Pick<FmhaFwdBuffers, 'seqstartQ' | 'seqstartK' | 'seqlenK'>,
  out: {
    readonly o: bigint;
    readonly oStrides: AttentionTensorStrides;
    readonly lse: bigint;
    readonly lseStrides: { readonly batch: number; readonly head: number };
  },
) {
  const group = p.mode === 'group';
  const { seqstartQ, seqstartK, seqlenK } = checkFmhaFwdSequenceBuffers(p, buffers);
  const window = p.mask.kind === 'window' ? p.mask : undefined;
  return {
    o: out.o,
    o_stride_row: out.oStrides.row,
    o_stride_head: out.oStrides.head,
    o_stride_batch: group ? 0 : out.oStrides.batch,
    lse: out.lse,
    lse_stride_head: out.lseStrides.head,
    lse_stride_batch: group ? 0 : out.lseStrides.batch,
    seqlen_q: p.seqlenQ,
    seqlen_k: p.seqlenK,
    seqstart_q: seqstartQ,
    seqstart_k: seqstartK,
    seqlen_k_ptr: seqlenK,
    nhead_ratio: p.nheadQ / p.nheadK,
    scale_log2: p.scale * Math.LOG2E,
    mask_left: window?.left ?? -1,
    mask_right: window?.right ?? -1,
    mask_top_left: window === undefined || window.alignment === 'topLeft' ? 1 : 0,
  };
}
