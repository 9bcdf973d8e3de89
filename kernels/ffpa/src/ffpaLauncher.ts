// The launch side of FFPA: one launch per column slice of O, each the slice's instance on V and O
// offset to the slice's first column — validated in full before anything is enqueued.
import type { FmhaFwdLaunchProblem } from '@tilekit/fmha';
import {
  checkFmhaFwdInputs,
  checkFmhaFwdOutputs,
  FmhaFwdSm80Kernel,
  reportFmhaFwdOutputOverlaps,
  type FmhaFwdBuffers,
  type TensorMapEncoder,
} from '@tilekit/fmha-launch';
import { ArgumentError, ArgumentProblems, getDType } from '@tilekit/numeric';
import type { DeviceRange } from '@tilekit/runtime';
import type { FfpaColumnSlice } from './ffpaColumnSlices.ts';
import { prepareFfpaKernelLaunch, type FfpaKernel } from './ffpaKernel.ts';
import { ffpaSliceProblem } from './ffpaPlan.ts';

/** A slice's columns and the loaded kernel of its instance. */
export interface FfpaSliceKernel {
  readonly slice: FfpaColumnSlice;
  readonly kernel: FfpaKernel;
}

/** `range` from `bytes` on (a slice's columns of V or O keep the tensor's strides). */
function from(range: DeviceRange, bytes: number): DeviceRange {
  return { ptr: range.ptr + BigInt(bytes), bytes: Math.max(0, range.bytes - bytes) };
}

/**
 * Validates a launch of every slice of `p` (hdimV the full width) and returns `launch`, which
 * enqueues them in column order on `buffers.stream`. Q, K, V, O and LSE are first checked whole (size,
 * 16-byte starts of Q, K, V, O aligned to element pairs, LSE to 4 bytes; O and LSE overlapping none of Q, K, V or
 * each other), then each slice's launch as the forward
 * launcher checks it (`FmhaFwdKernel.prepare`: instance predicates, overlaps, group-mode arrays).
 * Throws `ArgumentError` naming the argument and the rule; nothing is enqueued then.
 */
export function prepareFfpaLaunch(
  kernels: readonly FfpaSliceKernel[],
  p: FmhaFwdLaunchProblem,
  buffers: FmhaFwdBuffers,
  encode: TensorMapEncoder,
): { launch(): void } {
  const e = getDType(p.dtype).bytes;
  const covered = kernels.reduce((end, k) => (k.slice.offset === end && k.slice.width > 0 ? end + k.slice.width : NaN), 0);
  if (covered !== p.hdimV)
    throw new ArgumentError(
      'kernels',
      `must cover the columns [0, ${p.hdimV}) of O in order`,
      kernels.map((k) => k.slice),
    );
  const whole = new ArgumentProblems(ArgumentError);
  const loader = kernels.every((k) => k.kernel instanceof FmhaFwdSm80Kernel) ? 'cp.async' : 'TMA';
  const inputs = whole.check(() => checkFmhaFwdInputs(p, buffers, loader));
  const outputs = whole.check(() => checkFmhaFwdOutputs(p, buffers));
  // Each slice sees only its own columns of V and O: overlaps between the whole tensors are checked here.
  reportFmhaFwdOutputOverlaps(whole, p, inputs, outputs);
  whole.throwIfAny();
  const { lse, ...rest } = buffers;
  const launches = kernels.map(({ slice, kernel }) => {
    const sliceProblem = ffpaSliceProblem(p, slice);
    const offset = slice.offset * e;
    const sliceBuffers = { ...rest, v: from(buffers.v, offset), o: from(buffers.o, offset), ...(sliceProblem.lse && lse ? { lse } : {}) };
    return prepareFfpaKernelLaunch(kernel, sliceProblem, sliceBuffers, encode);
  });
  return {
    launch: () => {
      for (const l of launches) l.launch();
    },
  };
}
