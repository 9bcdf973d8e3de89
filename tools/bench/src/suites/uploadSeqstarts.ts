// Group (varlen) mode's sequence starts on the device: the int32 arrays the attention kernels read.
import type { Device, DeviceBuffer } from '@tilekit/runtime';

/** The cumulative starts of a problem, seqstartQ and seqstartK (batch + 1 entries each); empty in batch mode. */
export interface Seqstarts {
  readonly mode: 'batch' | 'group';
  readonly seqstartQ: readonly number[];
  readonly seqstartK: readonly number[];
}

/** Group mode: `{ seqstartQ, seqstartK }` uploaded as int32 (each through `hold`); batch mode: `{}`. */
export function uploadSeqstarts(
  device: Pick<Device, 'upload'>,
  p: Seqstarts,
  hold: (buffer: DeviceBuffer) => DeviceBuffer,
): { readonly seqstartQ?: DeviceBuffer; readonly seqstartK?: DeviceBuffer } {
  if (p.mode === 'batch') return {};
  return { seqstartQ: hold(device.upload(new Int32Array(p.seqstartQ))), seqstartK: hold(device.upload(new Int32Array(p.seqstartK))) };
}
