// Q, K and V of a forward attention launch, checked.
import type { FmhaFwdLaunchProblem } from '@tilekit/fmha';
import { ArgumentError, ArgumentProblems } from '@tilekit/numeric';
import type { DeviceRange } from '@tilekit/runtime';
import { checkAlignedDeviceRange } from './checkAlignedDeviceRange.ts';
import type { FmhaFwdBuffers } from './fmhaFwdBuffers.ts';
import { fmhaFwdInputBytes } from './fmhaFwdInputBytes.ts';

/**
 * Checks Q, K and V of a forward launch: each holds its strided span (`attentionTensorSpan`, group
 * mode one "batch") and starts on a 16-byte boundary, which the `loader` (TMA, cp.async) needs.
 * Throws one ArgumentError naming every broken one of `q`, `k` and `v`.
 */
export function checkFmhaFwdInputs(
  p: FmhaFwdLaunchProblem,
  buffers: Pick<FmhaFwdBuffers, 'q' | 'k' | 'v'>,
  loader: string,
): { readonly q: DeviceRange; readonly k: DeviceRange; readonly v: DeviceRange } {
  const bytes = fmhaFwdInputBytes(p);
  const problems = new ArgumentProblems(ArgumentError);
  const why = ` (${loader})`;
  const q = problems.check(() => checkAlignedDeviceRange('q', buffers.q, bytes.q, 16, why));
  const k = problems.check(() => checkAlignedDeviceRange('k', buffers.k, bytes.k, 16, why));
  const v = problems.check(() => checkAlignedDeviceRange('v', buffers.v, bytes.v, 16, why));
  problems.throwIfAny();
  return { q: q!, k: k!, v: v! };
}
