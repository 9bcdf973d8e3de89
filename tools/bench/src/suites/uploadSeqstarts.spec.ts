import type { Device, DeviceBuffer } from '@tilekit/runtime';
import { describe, expect, it } from 'vitest';
import { uploadSeqstarts } from './uploadSeqstarts.ts';

/** A device whose upload keeps a copy of the host data as the "buffer". */
function fakeDevice(): Pick<Device, 'upload'> {
  return {
    upload: (host: ArrayBufferView) =>
      ({ host: new Int32Array(host.buffer.slice(host.byteOffset, host.byteOffset + host.byteLength)) }) as unknown as DeviceBuffer,
  };
}

describe('uploadSeqstarts', () => {
  it('group mode: seqstartQ and seqstartK as int32, each held', () => {
    const held: DeviceBuffer[] = [];
    const hold = (b: DeviceBuffer): DeviceBuffer => {
      held.push(b);
      return b;
    };
    const bufs = uploadSeqstarts(fakeDevice(), { mode: 'group', seqstartQ: [0, 5, 5, 14], seqstartK: [0, 5, 8, 17] }, hold);
    const host = (b: DeviceBuffer | undefined) => [...(b as unknown as { host: Int32Array }).host];
    expect(host(bufs.seqstartQ)).toEqual([0, 5, 5, 14]);
    expect(host(bufs.seqstartK)).toEqual([0, 5, 8, 17]);
    expect(held).toEqual([bufs.seqstartQ, bufs.seqstartK]);
  });

  it('batch mode: nothing', () => {
    expect(uploadSeqstarts(fakeDevice(), { mode: 'batch', seqstartQ: [], seqstartK: [] }, (b) => b)).toEqual({});
  });
});
