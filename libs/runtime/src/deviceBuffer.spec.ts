import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { fc, test } from '@fast-check/vitest';
import { ArgumentError } from '@tilekit/numeric';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CudaError } from './cudaError.ts';
import { Device } from './device.ts';
import { DeviceBuffer } from './deviceBuffer.ts';
import { collectedWithoutDispose, DisposedError } from './disposal.ts';
import { installFakeAddon, uninstallFakeAddon, type FakeAddon } from './testing/fakeAddon.ts';

// The TS side of device memory against a JS fake of the addon: ranges, views, disposal. The
// same operations run on a real GPU in deviceBuffer.gpu.spec.ts.
let fake: FakeAddon;
let device: Device;

beforeEach(() => {
  fake = installFakeAddon({ totalMemory: 1 << 24 });
  device = Device.open(0);
});
afterEach(() => uninstallFakeAddon());

function argumentOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    if (error instanceof ArgumentError) return error.argument;
    throw error;
  }
  return undefined;
}

describe('DeviceBuffer', () => {
  test.prop([fc.uint8Array({ minLength: 0, maxLength: 5000 }), fc.nat(64)])(
    'host → device → host round-trips any bytes at any offset',
    (bytes, offset) => {
      const buffer = device.alloc(bytes.length + offset);
      buffer.copyFromHost(bytes, { offset });
      expect(buffer.copyToHost(new Uint8Array(bytes.length), { offset })).toEqual(bytes);
      buffer.dispose();
    },
  );

  it('copies typed arrays by their bytes, and views of them', () => {
    const values = new Float32Array([1.5, -2, 3.25]);
    const buffer = device.upload(values);
    expect(buffer.bytes).toBe(12);
    expect(buffer.copyToHost(new Float32Array(3))).toEqual(values);
    const window = new Uint16Array(new ArrayBuffer(16), 4, 2);
    window.set([0xbeef, 0xcafe]);
    buffer.copyFromHost(window, { offset: 8 });
    expect([...buffer.copyToHost().subarray(8, 12)]).toEqual([0xef, 0xbe, 0xfe, 0xca]);
  });

  it('rejects copies and fills that leave the buffer, naming the argument', () => {
    const buffer = device.alloc(16);
    expect(argumentOf(() => buffer.copyFromHost(new Uint8Array(17)))).toBe('src');
    expect(argumentOf(() => buffer.copyFromHost(new Uint8Array(8), { offset: 9 }))).toBe('src');
    expect(argumentOf(() => buffer.copyToHost(new Uint8Array(17)))).toBe('dst');
    expect(argumentOf(() => buffer.copyFromHost(new Uint8Array(1), { offset: -1 }))).toBe('offset');
    expect(argumentOf(() => buffer.fill(1, { offset: 8, bytes: 9 }))).toBe('bytes');
    expect(argumentOf(() => buffer.fill(256))).toBe('value');
    expect(argumentOf(() => buffer.copyFrom(device.alloc(32)))).toBe('bytes (destination)');
    expect(argumentOf(() => buffer.copyFromHost([1, 2] as never))).toBe('src');
    expect(argumentOf(() => device.alloc(-1))).toBe('bytes');
    expect(argumentOf(() => device.alloc(1.5))).toBe('bytes');
    expect(argumentOf(() => device.alloc(2 ** 53))).toBe('bytes');
  });

  it('fills ranges with a byte (memset)', () => {
    const buffer = device.alloc(10).fill(0xaa).fill(0x11, { offset: 3, bytes: 4 });
    expect([...buffer.copyToHost()]).toEqual([0xaa, 0xaa, 0xaa, 0x11, 0x11, 0x11, 0x11, 0xaa, 0xaa, 0xaa]);
  });

  it('views share the allocation at an offset', () => {
    const buffer = device.upload(Uint8Array.from({ length: 64 }, (_, i) => i));
    const view = buffer.view(16, 8);
    expect(view.ptr).toBe(buffer.ptr + 16n);
    expect(view.isView).toBe(true);
    expect([...view.copyToHost()]).toEqual([16, 17, 18, 19, 20, 21, 22, 23]);
    view.fill(0);
    expect([...buffer.copyToHost().subarray(14, 26)]).toEqual([14, 15, 0, 0, 0, 0, 0, 0, 0, 0, 24, 25]);
    const nested = view.view(4);
    expect([nested.byteOffset, nested.bytes, nested.ptr]).toEqual([20, 4, buffer.ptr + 20n]);
    expect(argumentOf(() => buffer.view(60, 8))).toBe('bytes');
    expect(argumentOf(() => buffer.view(65))).toBe('byteOffset');
  });

  it('copies device to device, including between views, and refuses overlap', () => {
    const a = device.upload(Uint8Array.from({ length: 32 }, (_, i) => i));
    const b = device.alloc(32).fill(0);
    b.copyFrom(a, { srcOffset: 4, dstOffset: 8, bytes: 3 });
    expect([...b.copyToHost().subarray(7, 12)]).toEqual([0, 4, 5, 6, 0]);
    b.view(16).copyFrom(a.view(0, 16));
    expect([...b.copyToHost().subarray(16)]).toEqual([...a.copyToHost().subarray(0, 16)]);
    expect(argumentOf(() => a.view(0, 16).copyFrom(a.view(8, 16)))).toBe('src');
  });

  it('zero-byte buffers and copies are allowed and touch nothing', () => {
    const empty = device.alloc(0);
    expect(empty.ptr).toBe(0n);
    expect(empty.copyToHost()).toEqual(new Uint8Array(0));
    empty.copyFromHost(new Uint8Array(0)).fill(1);
    empty.dispose();
    expect(fake.allocations.size).toBe(0);
  });

  it('frees on dispose; views die with their allocation; double dispose is harmless', () => {
    const buffer = device.alloc(128);
    const view = buffer.view(64);
    const ptr = buffer.ptr;
    view.dispose();
    expect(() => view.ptr).toThrow(DisposedError);
    expect(buffer.copyToHost()).toHaveLength(128);
    buffer.dispose();
    buffer.dispose();
    expect(fake.freed).toEqual([ptr]);
    expect(() => buffer.copyToHost()).toThrow(DisposedError);
    expect(() => buffer.view(0).ptr).toThrow(DisposedError);
    expect(buffer.view.bind(buffer, 0)).toThrow(/used after dispose/);
  });

  it('reports the driver error for allocations larger than the device', () => {
    const error = (() => {
      try {
        device.alloc(1 << 25);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(CudaError);
    expect((error as CudaError).cudaName).toBe('CUDA_ERROR_OUT_OF_MEMORY');
    expect(device.alloc(1 << 10).bytes).toBe(1024);
  });

  it('frees memory that was garbage-collected without dispose (safety net)', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const before = collectedWithoutDispose();
    let ptr = 0n;
    (() => {
      const lost = DeviceBuffer.alloc(device, 256);
      ptr = lost.ptr;
      lost.view(8); // a view alone must not keep the memory alive once it is garbage too
    })();
    for (let i = 0; i < 50 && !fake.freed.includes(ptr); i += 1) {
      gc();
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(fake.freed).toContain(ptr);
    expect(collectedWithoutDispose()).toBeGreaterThan(before);
  });
});
