// A backward dq_dk_dv kernel run alone, as the kernel-level GPU specs (the dense sm_90a kernel's and
// FFPA's split-D one) do it: the instance compiled once and loaded with its dynamic shared memory,
// the case's inputs, LSE, D, NaN-filled dK/dV, the workspace image and the group-mode arrays on the
// device, one launch, and dK, dV and the workspace's dq_acc read back. Harness code for
// *.gpu.spec.ts (@tilekit/fmha-launch/testing).
import { fmhaBwdOperandElements, type FmhaBwdKernelLaunch } from '@tilekit/fmha';
import {
  buildOncePerInstance,
  Device,
  loadInstance,
  type CompilableInstance,
  type Compiler,
  type DeviceBuffer,
  type InstanceBuilder,
  type LoadedInstance,
  type PackedKernelArgs,
} from '@tilekit/runtime';
import type { FmhaBwdReferenceCase } from './fmhaBwdReferenceCase.ts';

/** Compiles and loads each dq_dk_dv instance once (on device 0, through `compiler()`), raising its dynamic shared memory limit. */
export function fmhaBwdDqDkDvKernelLoader<I extends CompilableInstance & { readonly sharedBytes: number }>(
  compiler: () => Compiler,
): InstanceBuilder<I, LoadedInstance> {
  return buildOncePerInstance(async (instance: I) => {
    const loaded = await loadInstance(instance, { device: Device.open(0), compiler: compiler(), flags: ['-std=c++17', '-lineinfo'] });
    loaded.kernel.setMaxDynamicSharedMemory(instance.sharedBytes);
    return loaded;
  });
}

/** The device buffers of one dq_dk_dv run. */
export interface FmhaBwdDqDkDvBuffers {
  readonly q: DeviceBuffer;
  readonly k: DeviceBuffer;
  readonly v: DeviceBuffer;
  readonly dO: DeviceBuffer;
  readonly lse: DeviceBuffer;
  readonly d: DeviceBuffer;
  readonly dk: DeviceBuffer;
  readonly dv: DeviceBuffer;
  readonly ws: DeviceBuffer;
  /** Group mode: seqstart_q and seqstart_k. */
  readonly sq?: DeviceBuffer;
  readonly sk?: DeviceBuffer;
}

/** The case's inputs, the reference's LSE and D, dK/dV filled with 0xff bytes (NaN: an element never written fails) and `workspace`. */
export function fmhaBwdDqDkDvBuffers(device: Device, rc: FmhaBwdReferenceCase, workspace: Uint8Array): FmhaBwdDqDkDvBuffers {
  const p = rc.problem;
  const e = fmhaBwdOperandElements(p);
  return {
    q: device.upload(rc.data.q),
    k: device.upload(rc.data.k),
    v: device.upload(rc.data.v),
    dO: device.upload(rc.data.dO),
    lse: device.upload(rc.ref.lse),
    d: device.upload(Float32Array.from(rc.ref.result.d)),
    dk: device.alloc(e.dK * 2).fill(0xff),
    dv: device.alloc(e.dV * 2).fill(0xff),
    ws: device.upload(workspace),
    ...(p.mode === 'group' ? { sq: device.upload(new Int32Array(p.seqstartQ)), sk: device.upload(new Int32Array(p.seqstartK)) } : {}),
  };
}

/** Launches `loaded` with `args`, then reads back dK, dV (dtype bits) and the workspace's `accElements` fp32 dq_acc at `accOffset` bytes. */
export function runFmhaBwdDqDkDv(
  loaded: LoadedInstance,
  launch: FmhaBwdKernelLaunch,
  args: PackedKernelArgs,
  bufs: FmhaBwdDqDkDvBuffers,
  accOffset: number,
  accElements: number,
): { readonly dK: Uint16Array; readonly dV: Uint16Array; readonly acc: Float32Array } {
  loaded.kernel.launch({ grid: launch.grid, block: launch.block, sharedBytes: launch.sharedBytes }, args);
  const dK = new Uint16Array(bufs.dk.copyToHost().buffer);
  const dV = new Uint16Array(bufs.dv.copyToHost().buffer);
  const acc = new Float32Array(bufs.ws.copyToHost().buffer, accOffset, accElements);
  return { dK, dV, acc };
}

/** Disposes every buffer of `bufs` (those absent skipped). */
export function disposeFmhaBwdBuffers(bufs: object): void {
  for (const buf of Object.values(bufs) as (DeviceBuffer | undefined)[]) buf?.dispose();
}
