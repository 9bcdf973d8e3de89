// One backward problem through a backward runner (the dense one or FFPA's: dot_do_o, dq_dk_dv,
// convert_dq) on the GPU against the fp32 CPU reference (`fmhaBwdReference` / `compareFmhaBwd`), and
// for deterministic dQ two more runs that must give bitwise the same dQ. Harness code for
// *.gpu.spec.ts (@tilekit/fmha-launch/testing).
import assert from 'node:assert/strict';
import {
  checkFmhaBwdProblem,
  compareFmhaBwd,
  fmhaBwdReference,
  formatFmhaBwdProblem,
  type CheckedFmhaBwdProblem,
  type FmhaBwdProblem,
} from '@tilekit/fmha';
import type { Device, DeviceBuffer } from '@tilekit/runtime';
import type { FmhaBwdRunnerBuffers } from '../bwd/fmhaBwdRunnerBuffers.ts';
import { deviceBits16, fmhaBwdGpuBuffers, fmhaBwdGpuInputs } from './fmhaBwdGpuBuffers.ts';

/** What the case needs of a runner: its kernels' names, a validated launch, and disposal. */
export interface FmhaBwdGpuRunner {
  readonly instances: readonly { readonly name: string }[];
  prepare(buffers: FmhaBwdRunnerBuffers): { launch(): void };
  dispose(): void;
}

/**
 * Runs `problem` on `device` through the runner `create` builds for it and checks dQ, dK and dV
 * against the reference within `attentionBwdToleranceFor` (every element of every sequence's rows;
 * gradients start as NaN, so an element never written fails); a deterministic problem runs twice
 * more from a NaN-filled dQ and must reproduce dQ bit for bit. Asserts and returns a summary line.
 */
export async function runFmhaBwdProblemGpuCase(
  problem: FmhaBwdProblem | CheckedFmhaBwdProblem,
  device: Device,
  create: (p: CheckedFmhaBwdProblem) => Promise<FmhaBwdGpuRunner>,
): Promise<string> {
  const p = 'rowsQ' in problem ? problem : checkFmhaBwdProblem(problem);
  const data = fmhaBwdGpuInputs(p);
  const ref = fmhaBwdReference(p, data);
  const runner = await create(p);
  const buffers = fmhaBwdGpuBuffers(device, p, data, ref);
  const names = runner.instances.map((i) => i.name).join(' + ');
  try {
    const run = runner.prepare(buffers);
    run.launch();
    const dQ = deviceBits16(buffers.dQ);
    const results = compareFmhaBwd(p, ref, { dQ, dK: deviceBits16(buffers.dK), dV: deviceBits16(buffers.dV) });
    for (const r of results)
      assert.equal(
        r.wrong,
        0,
        `${names} on ${formatFmhaBwdProblem(p)}: ${r.tensor} ${r.wrong}/${r.checked} elements off; first: ${r.first}`,
      );
    for (let again = 2; p.deterministic && again <= 3; again++) {
      buffers.dQ.fill(0xff);
      run.launch();
      const diff = deviceBits16(buffers.dQ).findIndex((x, j) => x !== dQ[j]);
      assert.equal(diff, -1, `${names}: deterministic dQ of run ${again} differs from run 1 at element ${diff}`);
    }
    const errors = results.map((r) => `${r.tensor} max |err| ${r.maxAbsErr.toExponential(2)}`).join(', ');
    return `${names}: ${errors}${p.deterministic ? '; dQ bitwise identical over 3 runs' : ''}`;
  } finally {
    device.synchronize();
    for (const b of Object.values(buffers) as DeviceBuffer[]) b.dispose();
    runner.dispose();
  }
}
