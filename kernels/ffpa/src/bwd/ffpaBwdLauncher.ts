// The launch of FFPA's backward dq_dk_dv kernel: its packed arguments (global pointers and element
// strides, no TMA maps) and grid from the backward's checked traits and arguments of @tilekit/fmha
// (the same ones the dense backward's launcher takes), so that its pure FmhaBwdLauncher can drive it.
import type { PackedArguments } from '@tilekit/codegen';
import { longestSlot, type CheckedFmhaBwdTraits, type FmhaBwdArgs } from '@tilekit/fmha';
import { fmhaBwdDqDkDvArgValues } from '@tilekit/fmha-launch';
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
    ...fmhaBwdDqDkDvArgValues(t, args),
  });
  const maxKeys = group ? longestSlot(t.seqstartK) : t.seqlenK;
  return { ...instance.launch(t.batch, t.nheadK, maxKeys), args: packed };
}
