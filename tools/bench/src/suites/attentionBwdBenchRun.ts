// One backward bench case on our side, for any backward runner (the dense one, FFPA's): the case's
// q, k, v, do uploaded as the server wrote them, O and LSE from our forward on them (untimed), the
// backward timed back to back (every kernel of it), and dQ, dK, dV written back for the server.
import { fmhaBwdOperandElements, fmhaBwdProblemFlops, formatFmhaBwdProblem, type CheckedFmhaBwdProblem } from '@tilekit/fmha';
import type { FmhaBwdRunnerBuffers } from '@tilekit/fmha-launch';
import type { Device, DeviceBuffer, KernelResources } from '@tilekit/runtime';
import type { CaseContext, OurCaseResult } from '../benchSuite.ts';
import { tflopsOf } from '../flops.ts';
import { measureLaunches } from '../timing/measureLaunches.ts';
import { attentionFileBytes } from './attentionFileLayout.ts';
import type { FmhaBwdTensorFiles } from './fmhaBwdCases.ts';
import { kernelResourcesNote } from './kernelResourcesNote.ts';
import { readCaseInput } from './readCaseInput.ts';
import { uploadSeqstarts } from './uploadSeqstarts.ts';
import { withHeldBuffers } from './withHeldBuffers.ts';

/** What the case needs of a backward runner. */
export interface AttentionBwdBenchRunner {
  readonly problem: CheckedFmhaBwdProblem;
  readonly instances: readonly { readonly name: string }[];
  readonly resources: readonly { readonly instance: string; readonly resources: KernelResources; readonly dynamicSharedBytes: number }[];
  readonly workspaceSize: { readonly total: number };
  prepare(buffers: FmhaBwdRunnerBuffers): { launch(): void };
}

/** Our forward that gives the backward its O and LSE (reads q, k, v and the seqstarts of the buffers, writes o and lse). */
export interface AttentionBwdBenchForward {
  readonly names: string;
  run(buffers: FmhaBwdRunnerBuffers): void;
}

/**
 * The backward's device memory (each buffer through `hold`): q, k, v, do from the case's files; O, LSE;
 * dQ, dK, dV 0xff-filled (an unwritten element is NaN).
 */
function bwdBuffers(
  device: Device,
  p: CheckedFmhaBwdProblem,
  files: FmhaBwdTensorFiles,
  ctx: CaseContext,
  hold: (b: DeviceBuffer) => DeviceBuffer,
) {
  const input = (name: 'q' | 'k' | 'v' | 'do'): DeviceBuffer =>
    hold(device.upload(readCaseInput(ctx, name, files[name].dtype, files[name].shape)));
  const gradient = (name: 'dq' | 'dk' | 'dv'): DeviceBuffer => hold(device.alloc(attentionFileBytes(files[name]))).fill(0xff);
  return {
    ...uploadSeqstarts(device, p, hold),
    q: input('q'),
    k: input('k'),
    v: input('v'),
    dO: input('do'),
    o: hold(device.alloc(attentionFileBytes(files.do))),
    lse: hold(device.alloc(Math.max(1, fmhaBwdOperandElements(p).lse) * 4)),
    dQ: gradient('dq'),
    dK: gradient('dk'),
    dV: gradient('dv'),
  };
}

/** `<problem>; workspace W B; O, LSE from <forward> (untimed); <kernel>: R registers, S B dynamic smem, X B spills; …` */
export function attentionBwdBenchNote(runner: AttentionBwdBenchRunner, forward: string): string {
  const kernels = kernelResourcesNote(runner.resources);
  return `${formatFmhaBwdProblem(runner.problem)}; workspace ${runner.workspaceSize.total} B; O, LSE from ${forward} (untimed); ${kernels}`;
}

/** Runs `forward` for O and LSE (untimed), then runs and times the backward and writes dQ, dK, dV. */
export function runAttentionBwdBenchCase(
  device: Device,
  forward: AttentionBwdBenchForward,
  runner: AttentionBwdBenchRunner,
  files: FmhaBwdTensorFiles,
  ctx: CaseContext,
): OurCaseResult {
  const p = runner.problem;
  return withHeldBuffers(device, (hold) => {
    const bufs = bwdBuffers(device, p, files, ctx, hold);
    forward.run(bufs);
    const timing = measureLaunches(device, runner.prepare(bufs).launch, ctx.timing);
    const write = (name: 'dq' | 'dk' | 'dv', buffer: DeviceBuffer) =>
      ctx.writeTensor(name, files[name].dtype, files[name].shape, buffer.copyToHost());
    return {
      ours: { ...timing, tflops: tflopsOf(fmhaBwdProblemFlops(p), timing.ms), instance: runner.instances.map((i) => i.name).join('+') },
      outputs: { dq: write('dq', bufs.dQ), dk: write('dk', bufs.dK), dv: write('dv', bufs.dV) },
      note: attentionBwdBenchNote(runner, forward.names),
    };
  });
}
