import { describe, expect, it } from 'vitest';
import { NO_RESOURCES, parsePtxasInfo } from './ptxasInfo.ts';

// Printed by nvcc 13.0 (`nvcc -cubin -arch=sm_90a -Xptxas -v`) for two entry functions.
const CUDA13 = `ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'spill' for 'sm_90a'
ptxas info    : Function properties for spill
    1024 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 32 registers, used 1 barriers, 1024 bytes cumulative stack size, 4096 bytes smem
ptxas info    : Compile time = 64.004 ms
ptxas info    : Compiling entry function 'axpy' for 'sm_90a'
ptxas info    : Function properties for axpy
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 10 registers, used 0 barriers
ptxas info    : Compile time = 1.685 ms
`;

// The older layout (CUDA 11/12): device-function properties, cmem banks, spills.
const CUDA12 = `ptxas info    : 0 bytes gmem, 8 bytes cmem[4]
ptxas info    : Function properties for _Z6helperPf
    16 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Compiling entry function 'heavy' for 'sm_80'
ptxas info    : Function properties for heavy
    96 bytes stack frame, 88 bytes spill stores, 92 bytes spill loads
ptxas info    : Used 16 registers, 8192 bytes smem, 380 bytes cmem[0], 12 bytes cmem[2]
`;

// Printed by NVRTC 13.0 with --ptxas-options=-v (H200 machine): note the "ptxas ." prefix.
const NVRTC13 = `ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'axpy' for 'sm_90a'
ptxas info    : Function properties for axpy
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 10 registers, used 0 barriers
ptxas info    : Compile time = 7.216 ms
`;

describe('parsePtxasInfo', () => {
  it('reads every entry of an nvcc 13 report', () => {
    const info = parsePtxasInfo(CUDA13);
    expect([...info.keys()]).toEqual(['spill', 'axpy']);
    expect(info.get('spill')).toEqual({
      registers: 32,
      spillStores: 0,
      spillLoads: 0,
      sharedBytes: 4096,
      stackFrame: 1024,
      constantBytes: 0,
      barriers: 1,
    });
    expect(info.get('axpy')).toEqual({ ...NO_RESOURCES, registers: 10 });
  });

  it('reads spills, smem and cmem banks, and ignores device functions', () => {
    const info = parsePtxasInfo(CUDA12);
    expect([...info.keys()]).toEqual(['heavy']);
    expect(info.get('heavy')).toEqual({
      registers: 16,
      spillStores: 88,
      spillLoads: 92,
      sharedBytes: 8192,
      stackFrame: 96,
      constantBytes: 392,
      barriers: 0,
    });
  });

  it('reads the NVRTC layout of the same report', () => {
    expect(parsePtxasInfo(NVRTC13)).toEqual(new Map([['axpy', { ...NO_RESOURCES, registers: 10 }]]));
    const spilled = NVRTC13.replace(
      '0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads',
      '48 bytes stack frame, 44 bytes spill stores, 40 bytes spill loads',
    );
    expect(parsePtxasInfo(spilled).get('axpy')).toMatchObject({ stackFrame: 48, spillStores: 44, spillLoads: 40 });
  });

  it('is empty for a log without a ptxas report', () => {
    expect(parsePtxasInfo('').size).toBe(0);
    expect(parsePtxasInfo('kernel.cu(3): error: expected a ";"').size).toBe(0);
  });
});
