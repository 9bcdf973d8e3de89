// The case runner of the randomized backward GPU spec: one problem through FmhaBwdRunner (dot_do_o,
// dq_dk_dv, convert_dq) against the float64 CPU reference (`fmhaBwdReference` / `compareFmhaBwd`), and
// for deterministic dQ a second run that must give bitwise the same dQ. Harness code for
// *.gpu.spec.ts; not exported by the package.
import assert from 'node:assert/strict';
import type { Compiler, Device, DeviceBuffer } from '@tilekit/runtime';
import { checkFmhaBwdProblem, formatFmhaBwdProblem, type FmhaBwdProblem } from '../fmhaBwdProblem.ts';
import { compareFmhaBwd, fmhaBwdReference } from '../fmhaBwdReference.ts';
import { FmhaBwdRunner, type FmhaBwdAnyInstance, type FmhaBwdKernel } from '../fmhaBwdRunner.ts';
import { deviceBits16, fmhaBwdGpuBuffers, fmhaBwdGpuInputs } from './fmhaBwdGpuBuffers.ts';

/** Where the runner gets its kernels: a memoized builder shared by every case of a spec. */
export interface FmhaBwdRandomKernels {
  readonly device: Device;
  readonly compiler: Compiler;
  readonly buildKernel: <I extends FmhaBwdAnyInstance>(instance: I) => Promise<FmhaBwdKernel<I>>;
}

/**
 * Runs `problem` on the GPU through `FmhaBwdRunner` (its kernels from `kernels`) and checks dQ, dK
 * and dV against the reference within `attentionBwdToleranceFor` (every element of every sequence's
 * rows); a deterministic problem runs twice more from a NaN-filled dQ and must reproduce dQ bit for
 * bit. Asserts and returns a summary line.
 */
export async function runFmhaBwdRandomCase(problem: FmhaBwdProblem, kernels: FmhaBwdRandomKernels): Promise<string> {
  const p = checkFmhaBwdProblem(problem);
  const data = fmhaBwdGpuInputs(p);
  const ref = fmhaBwdReference(p, data);
  const { device } = kernels;
  const runner = await FmhaBwdRunner.create(p, kernels);
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
    return (
      `${names}: ` +
      `${results.map((r) => `${r.tensor} max |err| ${r.maxAbsErr.toExponential(2)}`).join(', ')}` +
      `${p.deterministic ? '; dQ bitwise identical over 3 runs' : ''}`
    );
  } finally {
    device.synchronize();
    for (const b of Object.values(buffers) as DeviceBuffer[]) b.dispose();
    runner.dispose();
  }
}
