// O and LSE of a one-pass forward attention launch, checked.
import type { FmhaFwdLaunchProblem } from '@tilekit/fmha';
import { ArgumentError, ArgumentProblems, getDType } from '@tilekit/numeric';
import { checkDeviceRange, type DeviceRange } from '@tilekit/runtime';
import type { FmhaFwdBuffers } from './fmhaFwdBuffers.ts';
import { fmhaFwdOutputBytes } from './fmhaFwdOutputBytes.ts';

/**
 * Checks O (its strided span, element pairs aligned) and, when the problem asks for it, LSE (fp32,
 * `lseStrides`) of a one-pass forward launch. Throws one ArgumentError naming every broken one of
 * `o` and `lse`.
 */
export function checkFmhaFwdOutputs(
  p: FmhaFwdLaunchProblem,
  buffers: Pick<FmhaFwdBuffers, 'o' | 'lse'>,
): { readonly o: DeviceRange; readonly lse: DeviceRange | undefined } {
  const e = getDType(p.dtype).bytes;
  const bytes = fmhaFwdOutputBytes(p);
  const problems = new ArgumentProblems(ArgumentError);
  const o = problems.check(() => checkDeviceRange('o', buffers.o, bytes.o, 2 * e));
  const lse = p.lse ? problems.check(() => checkDeviceRange('lse', buffers.lse, bytes.lse, 4)) : undefined;
  problems.throwIfAny();
  return { o: o!, lse };
}
