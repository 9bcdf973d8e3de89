// The device buffers of one attention-forward bench case: q, k, v uploaded from the case's input
// files as the reference server wrote them, and O allocated for its output file, 0xff-filled (an
// element the kernel leaves unwritten reads as NaN).
import type { Device, DeviceBuffer } from '@tilekit/runtime';
import type { CaseContext } from '../benchSuite.ts';
import { attentionFileBytes, type AttentionTensorFile } from './attentionFileLayout.ts';
import { readCaseInput } from './readCaseInput.ts';

/** q, k, v and O of a case (each through `hold`, which frees them after the case). */
export function attentionCaseBuffers(
  device: Device,
  ctx: CaseContext,
  files: Readonly<Record<'q' | 'k' | 'v' | 'o', AttentionTensorFile>>,
  hold: (buffer: DeviceBuffer) => DeviceBuffer,
): { readonly q: DeviceBuffer; readonly k: DeviceBuffer; readonly v: DeviceBuffer; readonly o: DeviceBuffer } {
  const input = (name: 'q' | 'k' | 'v'): DeviceBuffer =>
    hold(device.upload(readCaseInput(ctx, name, files[name].dtype, files[name].shape)));
  return { q: input('q'), k: input('k'), v: input('v'), o: hold(device.alloc(attentionFileBytes(files.o))).fill(0xff) };
}
