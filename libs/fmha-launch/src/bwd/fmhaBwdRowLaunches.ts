// The launches of the backward's row kernels from the pure launcher's traits and arguments:
// dot_do_o (D = rowsum(dO ∘ O) into `args.d`) and convert_dq (the workspace's fp32 dq_acc into dQ).
import { longestSlot, type CheckedFmhaBwdTraits, type FmhaBwdArgs } from '@tilekit/fmha';
import type { FmhaBwdConvertDqInstance } from './fmhaBwdConvertDq.ts';
import type { FmhaBwdDotDoOInstance } from './fmhaBwdDotDoO.ts';
import type { FmhaBwdPackedLaunch } from './fmhaBwdKernel.ts';

/** Physical query rows of the longest sequence (group mode: the longest seqstart slot). */
function maxRowsQ(t: CheckedFmhaBwdTraits): number {
  return t.groupMode ? longestSlot(t.seqstartQ) : t.seqlenQ;
}

/** dot_do_o's launch: D = rowsum(dO ∘ O) into `args.d` (the LSE layout). */
export function packFmhaBwdDotDoO(instance: FmhaBwdDotDoOInstance, t: CheckedFmhaBwdTraits, args: FmhaBwdArgs): FmhaBwdPackedLaunch {
  const group = t.groupMode;
  const packed = instance.signature.pack({
    o: args.o.ptr,
    d_o: args.dO.ptr,
    d: args.d.ptr,
    o_stride_row: args.o.strides.row,
    o_stride_head: args.o.strides.head,
    o_stride_batch: group ? 0 : args.o.strides.batch,
    do_stride_row: args.dO.strides.row,
    do_stride_head: args.dO.strides.head,
    do_stride_batch: group ? 0 : args.dO.strides.batch,
    d_stride_head: args.d.strides.head,
    d_stride_batch: group ? 0 : args.d.strides.batch,
    seqlen_q: t.seqlenQ,
    seqstart_q: group ? (args.seqstartQ ?? 0n) : 0n,
  });
  return { ...instance.launch(t.batch, t.nheadQ, maxRowsQ(t)), args: packed };
}

/** convert_dq's launch: the workspace pointer, dQ and its strides. */
export function packFmhaBwdConvertDq(instance: FmhaBwdConvertDqInstance, t: CheckedFmhaBwdTraits, args: FmhaBwdArgs): FmhaBwdPackedLaunch {
  const group = t.groupMode;
  const packed = instance.signature.pack({
    workspace: args.workspace,
    dq: args.dQ.ptr,
    dq_stride_row: args.dQ.strides.row,
    dq_stride_head: args.dQ.strides.head,
    dq_stride_batch: group ? 0 : args.dQ.strides.batch,
    batch: t.batch,
    nhead_q: t.nheadQ,
    seqlen_q: t.seqlenQ,
    seqstart_q: group ? (args.seqstartQ ?? 0n) : 0n,
  });
  return { ...instance.launch(t.batch, t.nheadQ, maxRowsQ(t)), args: packed };
}
