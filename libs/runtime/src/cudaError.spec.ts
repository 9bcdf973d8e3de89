import { TilekitError } from '@tilekit/numeric';
import { describe, expect, it } from 'vitest';
import { CudaError, CudaUnavailableError } from './cudaError.ts';

describe('CudaError', () => {
  it('names the call and the CUDA error in its message and fields', () => {
    const error = new CudaError('cuMemAlloc_v2', 2, 'CUDA_ERROR_OUT_OF_MEMORY', 'out of memory');
    expect(error).toBeInstanceOf(TilekitError);
    expect(error.name).toBe('CudaError');
    expect(error.code).toBe('runtime/cuda');
    expect(error.message).toBe('cuMemAlloc_v2 failed: CUDA_ERROR_OUT_OF_MEMORY (2): out of memory');
    expect([error.call, error.cudaCode, error.cudaName]).toEqual(['cuMemAlloc_v2', 2, 'CUDA_ERROR_OUT_OF_MEMORY']);
    expect(error.sticky).toBe(false);
  });

  it('appends loader detail and knows sticky errors', () => {
    const error = new CudaError(
      'cuModuleLoadDataEx',
      200,
      'CUDA_ERROR_INVALID_IMAGE',
      'device kernel image is invalid',
      'loader log:\nbad ELF',
    );
    expect(error.message).toMatch(/^cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_IMAGE \(200\): .*\nloader log:\nbad ELF$/);
    expect(new CudaError('cuCtxSynchronize', 700, 'CUDA_ERROR_ILLEGAL_ADDRESS', 'illegal address').sticky).toBe(true);
  });

  it('CudaUnavailableError carries the probe reason', () => {
    const error = new CudaUnavailableError('cannot load libcuda.so.1');
    expect(error.code).toBe('runtime/cuda-unavailable');
    expect(error.message).toBe('no usable CUDA device: cannot load libcuda.so.1');
  });
});
