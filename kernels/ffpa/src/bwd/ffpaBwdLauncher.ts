// The launch of FFPA's backward dq_dk_dv kernel: its packed arguments (global pointers and element
// strides, no TMA maps) and grid from the backward's checked traits and arguments of @tilekit/fmha
// (the same ones the dense backward's launcher takes), so that its pure FmhaBwdLauncher can drive it.
import type { PackedArguments } from '@tilekit/codegen';
import { longestSlot, type CheckedFmhaBwdTraits, type FmhaBwdArgs } from '@tilekit/fmha';
import type { FfpaBwdInstance, FfpaBwdLaunch } from './ffpaBwdInstance.ts';

/** A packed launch: grid, block, dynamic shared memory and the argument bytes. */
export interface FfpaBwdPackedLaunch extends FfpaBwdLaunch {
  readonly args: PackedArguments;
}

/**
 * dq_dk_dv's launch: Q, K, V, dO, dK, dV as pointers with element strides (batch strides 0 in group
 * mode, where the kernel adds seqstart · row stride), LSE and D (the "lsed" layout), the workspace
 * (dq_acc in the unified workspace's `atomic` layout, zeroed before), the window mask and the scale.
 * Grid: (key tiles of the longest key sequence × column slices, key heads, batch).
 */
export function packFfpaBwdDqDkDv(instance: FfpaBwdInstance, t: CheckedFmhaBwdTraits, args: FmhaBwdArgs): FfpaBwdPackedLaunch {
  const group = t.groupMode;
  const batchStride = (s: number): number => (group ? 0 : s);
  const window = t.mask.kind === 'window' ? t.mask : undefined;
  const packed = instance.signature.pack({
    q: args.q.ptr,
    k: args.k.ptr,
    v: args.v.ptr,
    do_: args.dO.ptr,
    q_stride_row: args.q.strides.row,
    q_stride_head: args.q.strides.head,
    q_stride_batch: batchStride(args.q.strides.batch),
    k_stride_row: args.k.strides.row,
    k_stride_head: args.k.strides.head,
    k_stride_batch: batchStride(args.k.strides.batch),
    v_stride_row: args.v.strides.row,
    v_stride_head: args.v.strides.head,
    v_stride_batch: batchStride(args.v.strides.batch),
    do_stride_row: args.dO.strides.row,
    do_stride_head: args.dO.strides.head,
    do_stride_batch: batchStride(args.dO.strides.batch),
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
  });
  const maxKeys = group ? longestSlot(t.seqstartK) : t.seqlenK;
  return { ...instance.launch(t.batch, t.nheadK, maxKeys), args: packed };
}
