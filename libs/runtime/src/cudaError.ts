import { TilekitError } from '@tilekit/numeric';

/**
 * A CUDA driver call failed. `call` names the entry point (`cuMemAlloc_v2`), `cudaCode` is the
 * numeric CUresult and `cudaName` its `cuGetErrorName` spelling (`CUDA_ERROR_OUT_OF_MEMORY`);
 * the message holds all three plus the driver's description and any loader log. Raised from
 * native code through a factory registered at addon load, so every driver failure is one.
 */
export class CudaError extends TilekitError {
  readonly call: string;
  readonly cudaCode: number;
  readonly cudaName: string;
  readonly description: string;
  readonly detail: string;

  constructor(call: string, cudaCode: number, cudaName: string, description: string, detail = '') {
    const head = `${call} failed: ${cudaName} (${cudaCode}): ${description}`;
    super('runtime/cuda', detail === '' ? head : `${head}\n${detail}`);
    this.call = call;
    this.cudaCode = cudaCode;
    this.cudaName = cudaName;
    this.description = description;
    this.detail = detail;
  }

  /**
   * Sticky errors leave the context unusable (illegal address, launch failure, ...): every later
   * call in the process fails too. The process has to be restarted to use the device again.
   */
  get sticky(): boolean {
    return STICKY_CODES.has(this.cudaCode);
  }
}

// CUDA_ERROR_ILLEGAL_ADDRESS, LAUNCH_TIMEOUT, HARDWARE_STACK_ERROR, ILLEGAL_INSTRUCTION,
// MISALIGNED_ADDRESS, INVALID_ADDRESS_SPACE, INVALID_PC, LAUNCH_FAILED, ASSERT.
const STICKY_CODES = new Set([700, 702, 710, 714, 715, 716, 717, 718, 719]);

/** No usable CUDA driver or device: raised by `Device.open` with the probe's reason. */
export class CudaUnavailableError extends TilekitError {
  readonly reason: string;

  constructor(reason: string) {
    super('runtime/cuda-unavailable', `no usable CUDA device: ${reason}`);
    this.reason = reason;
  }
}
