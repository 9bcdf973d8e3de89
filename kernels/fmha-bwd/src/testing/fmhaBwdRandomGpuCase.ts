// The case runner of the randomized backward GPU spec: one problem through FmhaBwdRunner (dot_do_o,
// dq_dk_dv, convert_dq) against the float64 CPU reference (`fmhaBwdReference` / `compareFmhaBwd`), and
// for deterministic dQ a second run that must give bitwise the same dQ. Harness code for
// *.gpu.spec.ts; not exported by the package.
import assert from 'node:assert/strict';
import { randomBits16 } from '@tilekit/host';
import type { Compiler, Device, DeviceBuffer } from '@tilekit/runtime';
import {
  checkFmhaBwdProblem,
  fmhaBwdOperandElements,
  formatFmhaBwdProblem,
  type CheckedFmhaBwdProblem,
  type FmhaBwdProblem,
} from '../fmhaBwdProblem.ts';
import { compareFmhaBwd, fmhaBwdReference, type FmhaBwdHostInputs, type FmhaBwdReference } from '../fmhaBwdReference.ts';
import { FmhaBwdRunner, type FmhaBwdAnyInstance, type FmhaBwdKernel } from '../fmhaBwdRunner.ts';

/** Where the runner gets its kernels: a memoized builder shared by every case of a spec. */
export interface FmhaBwdRandomKernels {
  readonly device: Device;
  readonly compiler: Compiler;
  readonly buildKernel: <I extends FmhaBwdAnyInstance>(instance: I) => Promise<FmhaBwdKernel<I>>;
}

/** Q, K, V, dO bit patterns (at least one element each, so an empty operand still uploads), seeded by their sizes. */
function inputsOf(p: CheckedFmhaBwdProblem): FmhaBwdHostInputs {
  const e = fmhaBwdOperandElements(p);
  const fill = (count: number, seed: number): Uint16Array => randomBits16(p.dtype, Math.max(1, count), seed);
  return { q: fill(e.q, 1 + e.q), k: fill(e.k, 2 + e.k), v: fill(e.v, 3 + e.v), dO: fill(e.dO, 4 + e.dO) };
}

/** The device buffers of one run. */
interface BwdBuffers {
  readonly q: DeviceBuffer;
  readonly k: DeviceBuffer;
  readonly v: DeviceBuffer;
  readonly o: DeviceBuffer;
  readonly dO: DeviceBuffer;
  readonly lse: DeviceBuffer;
  readonly dQ: DeviceBuffer;
  readonly dK: DeviceBuffer;
  readonly dV: DeviceBuffer;
  readonly seqstartQ?: DeviceBuffer;
  readonly seqstartK?: DeviceBuffer;
}

/** Inputs, the forward's O and LSE from the reference, gradients filled with 0xff bytes (NaN: an element never written fails). */
function buffersOf(device: Device, p: CheckedFmhaBwdProblem, data: FmhaBwdHostInputs, ref: FmhaBwdReference): BwdBuffers {
  const e = fmhaBwdOperandElements(p);
  const gradient = (count: number): DeviceBuffer => device.alloc(Math.max(1, count) * 2).fill(0xff);
  return {
    q: device.upload(data.q),
    k: device.upload(data.k),
    v: device.upload(data.v),
    o: device.upload(ref.o),
    dO: device.upload(data.dO),
    lse: device.upload(ref.lse.length > 0 ? ref.lse : new Float32Array(1)),
    dQ: gradient(e.dQ),
    dK: gradient(e.dK),
    dV: gradient(e.dV),
    ...(p.mode === 'group'
      ? { seqstartQ: device.upload(new Int32Array(p.seqstartQ)), seqstartK: device.upload(new Int32Array(p.seqstartK)) }
      : {}),
  };
}

function bitsOf(b: DeviceBuffer): Uint16Array {
  const x = b.copyToHost();
  return new Uint16Array(x.buffer, x.byteOffset, x.byteLength / 2);
}

/**
 * Runs `problem` on the GPU through `FmhaBwdRunner` (its kernels from `kernels`) and checks dQ, dK
 * and dV against the reference within `attentionBwdToleranceFor` (every element of every sequence's
 * rows); a deterministic problem runs twice more from a NaN-filled dQ and must reproduce dQ bit for
 * bit. Asserts and returns a summary line.
 */
export async function runFmhaBwdRandomCase(problem: FmhaBwdProblem, kernels: FmhaBwdRandomKernels): Promise<string> {
  const p = checkFmhaBwdProblem(problem);
  const data = inputsOf(p);
  const ref = fmhaBwdReference(p, data);
  const { device } = kernels;
  const runner = await FmhaBwdRunner.create(p, kernels);
  const buffers = buffersOf(device, p, data, ref);
  const names = runner.instances.map((i) => i.name).join(' + ');
  try {
    const run = runner.prepare(buffers);
    run.launch();
    const dQ = bitsOf(buffers.dQ);
    const results = compareFmhaBwd(p, ref, { dQ, dK: bitsOf(buffers.dK), dV: bitsOf(buffers.dV) });
    for (const r of results)
      assert.equal(
        r.wrong,
        0,
        `${names} on ${formatFmhaBwdProblem(p)}: ${r.tensor} ${r.wrong}/${r.checked} elements off; first: ${r.first}`,
      );
    for (let again = 2; p.deterministic && again <= 3; again++) {
      buffers.dQ.fill(0xff);
      run.launch();
      const diff = bitsOf(buffers.dQ).findIndex((x, j) => x !== dQ[j]);
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
