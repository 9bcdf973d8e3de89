// The case runner of the randomized forward GPU spec: one problem through FmhaFwdRunner (dispatch,
// split-KV and combine included) against the fp32 CPU reference, every O element and LSE row
// checked with `checkFmhaFwdOutputs`; the inputs and device buffers of a runner run, which the other
// runner specs share. Harness code for *.gpu.spec.ts; not exported by the package.
import assert from 'node:assert/strict';
import {
  referenceAttentionFwd,
  checkFmhaFwdProblem,
  fmhaFwdOperandElements,
  fmhaFwdReferenceArgs,
  formatFmhaFwdProblem,
  type CheckedFmhaFwdProblem,
  type FmhaFwdProblem,
} from '@tilekit/fmha';
import { randomBits16 } from '@tilekit/host';
import { decodeArray } from '@tilekit/numeric';
import type { Compiler, Device, DeviceBuffer } from '@tilekit/runtime';
import type { FmhaFwdCombineInstance } from '../fmhaFwdCombine.ts';
import type { FmhaFwdCombineKernel } from '../fmhaFwdCombineLauncher.ts';
import type { FmhaFwdInstance } from '@tilekit/fmha-launch';
import type { FmhaFwdKernel } from '@tilekit/fmha-launch';
import { FmhaFwdRunner } from '../fmhaFwdRunner.ts';
import { checkFmhaFwdOutputs } from '@tilekit/fmha-launch/testing';

/** Where the runner gets its kernels: memoized builders shared by every case of a spec. */
export interface FmhaFwdRandomKernels {
  readonly device: Device;
  readonly compiler: Compiler;
  readonly buildKernel: (instance: FmhaFwdInstance) => Promise<FmhaFwdKernel>;
  readonly buildCombine: (instance: FmhaFwdCombineInstance) => Promise<FmhaFwdCombineKernel>;
}

/** Q, K, V bit patterns of a forward GPU run. */
export interface FmhaFwdGpuInputs {
  readonly q: Uint16Array;
  readonly k: Uint16Array;
  readonly v: Uint16Array;
}

/** Q, K, V bit patterns (at least one element each, so an empty operand still uploads), seeded by the problem's rows. */
export function fmhaFwdGpuInputs(p: CheckedFmhaFwdProblem): FmhaFwdGpuInputs {
  const e = fmhaFwdOperandElements(p);
  return {
    q: randomBits16(p.dtype, Math.max(1, e.q), 1 + p.rowsQ),
    k: randomBits16(p.dtype, Math.max(1, e.k), 2 + p.rowsK),
    v: randomBits16(p.dtype, Math.max(1, e.v), 3 + p.rowsK),
  };
}

/** The device buffers of one run. */
export interface FmhaFwdGpuBuffers {
  readonly q: DeviceBuffer;
  readonly k: DeviceBuffer;
  readonly v: DeviceBuffer;
  readonly o: DeviceBuffer;
  readonly lse?: DeviceBuffer;
  readonly seqstartQ?: DeviceBuffer;
  readonly seqstartK?: DeviceBuffer;
  readonly seqlenK?: DeviceBuffer;
}

/** Device buffers of a run: inputs, O and LSE filled with 0xff bytes (NaN, so a row never written fails), group-mode int32 arrays. */
export function fmhaFwdGpuBuffers(device: Device, p: CheckedFmhaFwdProblem, data: FmhaFwdGpuInputs): FmhaFwdGpuBuffers {
  const e = fmhaFwdOperandElements(p);
  const int32 = (xs: readonly number[]) => device.upload(new Int32Array(xs));
  return {
    q: device.upload(data.q),
    k: device.upload(data.k),
    v: device.upload(data.v),
    o: device.alloc(Math.max(1, e.o) * 2).fill(0xff),
    ...(p.lse ? { lse: device.alloc(Math.max(1, e.lse) * 4).fill(0xff) } : {}),
    ...(p.mode === 'group' ? { seqstartQ: int32(p.seqstartQ), seqstartK: int32(p.seqstartK) } : {}),
    ...(p.hasSeqlenK ? { seqlenK: int32(p.seqlensK) } : {}),
  };
}

/**
 * Runs `problem` on the GPU through `FmhaFwdRunner` (its kernels from `kernels`) and checks O and,
 * when asked for, LSE against `referenceAttentionFwd` within `attentionFwdToleranceFor`. Asserts that
 * no element is off (the message names the first) and returns a summary line.
 */
export async function runFmhaFwdRandomCase(problem: FmhaFwdProblem, kernels: FmhaFwdRandomKernels): Promise<string> {
  const p = checkFmhaFwdProblem(problem);
  const data = fmhaFwdGpuInputs(p);
  const args = fmhaFwdReferenceArgs(p, data);
  const ref = referenceAttentionFwd(args);
  const { device } = kernels;
  const runner = await FmhaFwdRunner.create(p, kernels);
  const buffers = fmhaFwdGpuBuffers(device, p, data);
  try {
    runner.run(buffers);
    device.synchronize();
    const e = fmhaFwdOperandElements(p);
    const o = decodeArray(p.dtype, new Uint16Array(buffers.o.copyToHost().buffer).subarray(0, e.o));
    const lse = buffers.lse === undefined ? undefined : new Float32Array(buffers.lse.copyToHost().buffer).subarray(0, e.lse);
    const found = checkFmhaFwdOutputs(args, ref, { o, ...(lse ? { lse } : {}) });
    const instances = `${runner.instances.map((i) => i.name).join(' + ')} (${runner.problem.numSplits} split${runner.problem.numSplits > 1 ? 's' : ''})`;
    assert.equal(found.bad, 0, `${instances} on ${formatFmhaFwdProblem(p)}: ${found.bad} elements off; first: ${found.first}`);
    return (
      `${instances}: max |err| O ${found.worstO.toExponential(2)} (atol ` +
      `${found.tol.o.atol.toExponential(2)})` +
      `${lse ? `, LSE ${found.worstL.toExponential(2)}` : ', no LSE'}`
    );
  } finally {
    device.synchronize();
    for (const b of Object.values(buffers)) b.dispose();
    runner.dispose();
  }
}
