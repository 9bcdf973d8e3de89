// The int8 Q and K − km (and their per-block scales) our int8 Q·Kᵀ multiplies, read from the GPU.
// SpargeRunner keeps its block-map intermediates to itself, so this runs the same block-map kernels
// (SpargeBlockMapKernels, same problem, same inputs) once more into buffers we can read: the kernels
// are deterministic (fixed reduction order, no float atomics), so the bytes are the runner's; its
// LUT is returned too, and the suite checks it equals the runner's as evidence.
import {
  spargeBlockMapProblemOf,
  type SpargeBlockMapIntermediates,
  type SpargeBlockMapKernels,
  type SpargeBlockMapProblem,
  type SpargeParams,
  type SpargePlan,
} from '@tilekit/kernel-sparge';
import { DeviceBuffer, type Device, type DeviceRange } from '@tilekit/runtime';
import type { SpargeInt8Tensor } from './spargeDequant.ts';

/** What the block-map stage quantized, and the LUT it selected. */
export interface SpargeInt8Readback {
  readonly q: SpargeInt8Tensor;
  readonly k: SpargeInt8Tensor;
  readonly lut: Int32Array;
  readonly validBlockNum: Int32Array;
}

/** The block-map problem the runner builds for a batch-mode plan (its shape, strides, the params with the kernels' blocks). */
export function spargeBlockMapProblemOfPlan(plan: SpargePlan, params: SpargeParams): SpargeBlockMapProblem {
  const p = plan.attention;
  if (p.mode !== 'batch') throw new Error('spargeBlockMapProblemOfPlan: batch mode only');
  return spargeBlockMapProblemOf(p, params, plan.params);
}

function download(name: string, range: DeviceRange | undefined): Uint8Array {
  if (!(range instanceof DeviceBuffer)) throw new Error(`sparge int8 readback: ${name} is not a device buffer`);
  return range.copyToHost();
}

const int8 = (x: Uint8Array): Int8Array => new Int8Array(x.buffer, x.byteOffset, x.byteLength);
const float32 = (x: Uint8Array): Float32Array => new Float32Array(x.buffer, x.byteOffset, x.byteLength / 4);
const int32 = (x: Uint8Array): Int32Array => new Int32Array(x.buffer, x.byteOffset, x.byteLength / 4);

function downloadReadback(x: SpargeBlockMapIntermediates, lut: DeviceBuffer, validBlockNum: DeviceBuffer): SpargeInt8Readback {
  return {
    q: { values: int8(download('q8', x.q8)), scales: float32(download('qScale', x.qScale)) },
    k: { values: int8(download('k8', x.k8)), scales: float32(download('kScale', x.kScale)) },
    lut: int32(lut.copyToHost()),
    validBlockNum: int32(validBlockNum.copyToHost()),
  };
}

/** Runs the block-map stage of a plan (int8 on) on q and k once and downloads its int8 tensors, scales and LUT. */
export function readbackSpargeInt8(
  device: Device,
  kernels: SpargeBlockMapKernels,
  plan: SpargePlan,
  params: SpargeParams,
  inputs: { readonly q: DeviceRange; readonly k: DeviceRange },
): SpargeInt8Readback {
  const { batch, nheadQ, qBlocks, kBlocks } = plan.attention;
  const cells = batch * nheadQ * qBlocks * kBlocks;
  const owned = [device.alloc(cells), device.alloc(4 * cells), device.alloc(4 * batch * nheadQ * qBlocks)];
  const [blockMap, lut, validBlockNum] = owned as [DeviceBuffer, DeviceBuffer, DeviceBuffer];
  try {
    const run = kernels.prepare(spargeBlockMapProblemOfPlan(plan, params), { ...inputs, blockMap, lut, validBlockNum });
    try {
      run.launch();
      device.synchronize();
      return downloadReadback(run.intermediates, lut, validBlockNum);
    } finally {
      device.synchronize();
      run.dispose();
    }
  } finally {
    for (const b of owned) b.dispose();
  }
}
