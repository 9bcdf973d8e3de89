import { ArgumentError } from '@tilekit/numeric';
import { afterEach, describe, expect, it } from 'vitest';
import { CudaUnavailableError } from './cudaError.ts';
import { Device } from './device.ts';
import { H200_INFO, installFakeAddon, uninstallFakeAddon } from './testing/fakeAddon.ts';

afterEach(() => uninstallFakeAddon());

describe('Device (fake addon)', () => {
  it('reads the attributes once and picks the arch from the capability', () => {
    installFakeAddon();
    const device = Device.open(0);
    expect(Device.open(0)).toBe(device);
    expect(device.name).toBe(H200_INFO.name);
    expect(device.computeCapability).toEqual({ major: 9, minor: 0 });
    expect(device.arch).toBe('sm_90a');
    expect(device.smCount).toBe(132);
    expect(device.sharedMemoryPerBlockOptin).toBe(232_448);
    expect(device.l2CacheBytes).toBe(52_428_800);
    expect(device.totalMemoryBytes).toBe(H200_INFO.totalMemoryBytes);
    expect(device.driverVersion).toBe(13000);
    expect(device.maxGridDim).toEqual([2_147_483_647, 65_535, 65_535]);
    expect(device.clusterLaunch).toBe(true);
    expect(String(device)).toBe('Device(0: NVIDIA H200 (fake), sm_90a)');
  });

  it('rejects an ordinal beyond the device count', () => {
    installFakeAddon();
    expect(() => Device.open(1)).toThrow(ArgumentError);
    expect(() => Device.open(-1)).toThrow(/ordinal/);
  });
});

describe('Device (real addon)', () => {
  it.runIf(Device.count() === 0)('open() reports the probe reason when there is no CUDA', () => {
    expect(() => Device.open(0)).toThrow(CudaUnavailableError);
    expect(() => Device.open(0)).toThrow(/no usable CUDA device: /);
  });
});
