// The group-mode sequence buffers of a forward attention launch, checked.
import type { FmhaFwdLaunchProblem } from '@tilekit/fmha';
import { ArgumentError, ArgumentProblems } from '@tilekit/numeric';
import { checkDeviceRange } from '@tilekit/runtime';
import type { FmhaFwdBuffers } from './fmhaFwdBuffers.ts';

/**
 * Checks the group-mode sequence buffers (`seqstartQ`/`seqstartK` of batch + 1 int32, `seqlenK` of
 * batch — required when a checked problem has per-batch keys (`hasSeqlenK`), else optional; each
 * 4-byte aligned) and returns their addresses (0 in batch mode). Throws one ArgumentError naming
 * every missing, short or misaligned buffer.
 */
export function checkFmhaFwdSequenceBuffers(
  p: FmhaFwdLaunchProblem,
  buffers: Pick<FmhaFwdBuffers, 'seqstartQ' | 'seqstartK' | 'seqlenK'>,
): { readonly seqstartQ: bigint; readonly seqstartK: bigint; readonly seqlenK: bigint } {
  if (p.mode !== 'group') return { seqstartQ: 0n, seqstartK: 0n, seqlenK: 0n };
  const v = new ArgumentProblems(ArgumentError);
  const seqstartQ = v.check(() => checkDeviceRange('seqstartQ', buffers.seqstartQ, 4 * (p.batch + 1), 4).ptr);
  const seqstartK = v.check(() => checkDeviceRange('seqstartK', buffers.seqstartK, 4 * (p.batch + 1), 4).ptr);
  // A checked problem with per-batch keys (`hasSeqlenK`) is computed with them: without the buffer the kernel would use whole slots.
  const required = 'hasSeqlenK' in p && p.hasSeqlenK === true;
  if (required && buffers.seqlenK === undefined) v.report('seqlenK', 'is required: the problem gives per-batch seqlenK', undefined);
  const seqlenK = buffers.seqlenK === undefined ? 0n : v.check(() => checkDeviceRange('seqlenK', buffers.seqlenK, 4 * p.batch, 4).ptr);
  v.throwIfAny();
  return { seqstartQ: seqstartQ!, seqstartK: seqstartK!, seqlenK: seqlenK! };
}
