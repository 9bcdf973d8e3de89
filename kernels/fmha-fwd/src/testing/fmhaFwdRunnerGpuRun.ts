// One run of a created FmhaFwdRunner on the GPU, as the runner specs (split-KV, score modifiers)
// make it: the inputs uploaded, O and LSE read back. Harness code for *.gpu.spec.ts; not exported
// by the package.
import { fmhaFwdOperandElements, type AttentionScoreSetup } from '@tilekit/fmha';
import { decodeArray } from '@tilekit/numeric';
import type { Device } from '@tilekit/runtime';
import type { FmhaFwdRunner } from '../fmhaFwdRunner.ts';
import { fmhaFwdGpuBuffers, type FmhaFwdGpuInputs } from './fmhaFwdRandomGpuCase.ts';

/** What a run gave: O (decoded, in O's strides), LSE (when the problem asks for it), the split count and the instances. */
export interface FmhaFwdRunnerGpuRun {
  readonly o: Float64Array;
  readonly lse?: Float32Array;
  readonly numSplits: number;
  /** The instances' names, joined with ' + '. */
  readonly instances: string;
}

/**
 * Runs `runner` once over `data` on `device` (O and LSE start as 0xff bytes, NaN, so a row never
 * written fails; with `score`, its values and ALiBi's uploaded slopes go with the buffers) and reads
 * O and LSE back. Frees its buffers, not the runner.
 */
export function fmhaFwdRunnerGpuRun(
  runner: FmhaFwdRunner,
  device: Device,
  data: FmhaFwdGpuInputs,
  score?: AttentionScoreSetup,
): FmhaFwdRunnerGpuRun {
  const p = runner.problem;
  const e = fmhaFwdOperandElements(p);
  const buffers = fmhaFwdGpuBuffers(device, p, data);
  const slopes = score?.slopes === undefined ? undefined : device.upload(score.slopes);
  try {
    runner.run({ ...buffers, ...(score === undefined ? {} : { scoreModifier: score.kernel(slopes?.ptr) }) });
    device.synchronize();
    const o = decodeArray(p.dtype, new Uint16Array(buffers.o.copyToHost().buffer).subarray(0, e.o));
    const lse = buffers.lse === undefined ? {} : { lse: new Float32Array(buffers.lse.copyToHost().buffer).slice(0, e.lse) };
    return { o, ...lse, numSplits: p.numSplits, instances: runner.instances.map((i) => i.name).join(' + ') };
  } finally {
    device.synchronize();
    for (const b of [...Object.values(buffers), slopes]) b?.dispose();
  }
}
