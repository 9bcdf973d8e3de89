// The kernel-argument values every dq_dk_dv kernel shares (the dense TMA one and FFPA's split-D one):
// LSE and D, dK and dV, the workspace, the heads and sequences, the scale and the window mask — from
// the pure launcher's traits and arguments, batch strides 0 in group mode.
import type { CheckedFmhaBwdTraits, FmhaBwdArgs } from '@tilekit/fmha';

/** The values of the parameters from `lse` to `mask_top_left` of a dq_dk_dv kernel. */
export function fmhaBwdDqDkDvArgValues(t: CheckedFmhaBwdTraits, args: FmhaBwdArgs) {
  const group = t.groupMode;
  const batchStride = (s: number): number => (group ? 0 : s);
  const window = t.mask.kind === 'window' ? t.mask : undefined;
  return {
    lse: args.lse.ptr,
    d: args.d.ptr,
    lse_stride_head: args.lse.strides.head,
    lse_stride_batch: batchStride(args.lse.strides.batch),
    dk: args.dK.ptr,
    dv: args.dV.ptr,
    dk_stride_row: args.dK.strides.row,
    dk_stride_head: args.dK.strides.head,
    dk_stride_batch: batchStride(args.dK.strides.batch),
    dv_stride_row: args.dV.strides.row,
    dv_stride_head: args.dV.strides.head,
    dv_stride_batch: batchStride(args.dV.strides.batch),
    workspace: args.workspace,
    batch: t.batch,
    nhead_q: t.nheadQ,
    nhead_ratio: t.nheadQ / t.nheadK,
    seqlen_q: t.seqlenQ,
    seqlen_k: t.seqlenK,
    seqstart_q: group ? (args.seqstartQ ?? 0n) : 0n,
    seqstart_k: group ? (args.seqstartK ?? 0n) : 0n,
    seqlen_k_ptr: group ? (args.seqlenK ?? 0n) : 0n,
    scale: args.scale,
    scale_log2: args.scale * Math.LOG2E,
    mask_left: window?.left ?? -1,
    mask_right: window?.right ?? -1,
    mask_top_left: window === undefined || window.alignment === 'topLeft' ? 1 : 0,
  };
}
