// Outputs of a forward attention launch overlapping its inputs or each other, reported.
import type { FmhaFwdLaunchProblem } from '@tilekit/fmha';
import type { ArgumentProblems } from '@tilekit/numeric';
import type { DeviceRange } from '@tilekit/runtime';
import { fmhaFwdInputBytes } from './fmhaFwdInputBytes.ts';
import { fmhaFwdOutputBytes } from './fmhaFwdOutputBytes.ts';

/** A buffer as far as a launch touches it: `bytes` from its address (0: nothing). */
export interface FmhaFwdExtent {
  readonly name: string;
  readonly range: DeviceRange | undefined;
  readonly bytes: number;
}

function overlap(x: FmhaFwdExtent, y: FmhaFwdExtent): boolean {
  if (x.range === undefined || y.range === undefined || x.bytes === 0 || y.bytes === 0) return false;
  return x.range.ptr < y.range.ptr + BigInt(y.bytes) && y.range.ptr < x.range.ptr + BigInt(x.bytes);
}

/**
 * Reports to `problems` every output whose extent overlaps an input's or an earlier output's (rule
 * `must not overlap <other>`): other blocks still read the inputs while one writes, so an output
 * over an input (O over Q, say) races. Extents that were not checked (undefined) are skipped.
 */
export function reportFmhaFwdOverlaps(
  problems: ArgumentProblems,
  outputs: readonly FmhaFwdExtent[],
  inputs: readonly FmhaFwdExtent[],
): void {
  outputs.forEach((out, i) => {
    for (const other of [...inputs, ...outputs.slice(0, i)]) {
      if (overlap(out, other))
        problems.report(out.name, `must not overlap ${other.name} (the kernel reads it while writing ${out.name})`, {
          [out.name]: `0x${out.range!.ptr.toString(16)}`,
          [other.name]: `0x${other.range!.ptr.toString(16)}`,
        });
    }
  });
}

/**
 * Reports to `problems` O or LSE overlapping Q, K, V or each other (see `reportFmhaFwdOverlaps`),
 * for the buffers of a one-pass launch that passed their own checks.
 */
export function reportFmhaFwdOutputOverlaps(
  problems: ArgumentProblems,
  p: FmhaFwdLaunchProblem,
  inputs: { readonly q: DeviceRange; readonly k: DeviceRange; readonly v: DeviceRange } | undefined,
  outputs: { readonly o: DeviceRange; readonly lse: DeviceRange | undefined } | undefined,
): void {
  if (inputs === undefined || outputs === undefined) return;
  const read = fmhaFwdInputBytes(p);
  const written = fmhaFwdOutputBytes(p);
  const ins = (['q', 'k', 'v'] as const).map((name) => ({ name, range: inputs[name], bytes: read[name] }));
  reportFmhaFwdOverlaps(
    problems,
    [
      { name: 'o', range: outputs.o, bytes: written.o },
      { name: 'lse', range: outputs.lse, bytes: written.lse },
    ],
    ins,
  );
}
