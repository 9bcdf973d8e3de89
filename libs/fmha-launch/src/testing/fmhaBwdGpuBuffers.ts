// The host inputs and device buffers of one backward run through a backward runner, and the
// read-back of a 16-bit output, as the backward GPU specs build them. Harness code for *.gpu.spec.ts
// (@tilekit/fmha-launch/testing).
import { randomBits16 } from '@tilekit/host';
import type { Device, DeviceBuffer } from '@tilekit/runtime';
import { fmhaBwdOperandElements, type CheckedFmhaBwdProblem, type FmhaBwdHostInputs, type FmhaBwdReference } from '@tilekit/fmha';

/** The device buffers of one run. */
export interface FmhaBwdGpuBuffers {
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

/** Q, K, V, dO bit patterns (at least one element each, so an empty operand still uploads), seeded by their sizes. */
export function fmhaBwdGpuInputs(p: CheckedFmhaBwdProblem): FmhaBwdHostInputs {
  const e = fmhaBwdOperandElements(p);
  const fill = (count: number, seed: number): Uint16Array => randomBits16(p.dtype, Math.max(1, count), seed);
  return { q: fill(e.q, 1 + e.q), k: fill(e.k, 2 + e.k), v: fill(e.v, 3 + e.v), dO: fill(e.dO, 4 + e.dO) };
}

/** Inputs, the forward's O and LSE from the reference, gradients filled with 0xff bytes (NaN: an element never written fails). */
export function fmhaBwdGpuBuffers(
  device: Device,
  p: CheckedFmhaBwdProblem,
  data: FmhaBwdHostInputs,
  ref: FmhaBwdReference,
): FmhaBwdGpuBuffers {
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

/** A buffer's bytes as 16-bit elements. */
export function deviceBits16(b: DeviceBuffer): Uint16Array {
  const x = b.copyToHost();
  return new Uint16Array(x.buffer, x.byteOffset, x.byteLength / 2);
}
