import { TilekitError } from '@tilekit/numeric';
import { unsettledLaunches } from './launchJournal.ts';

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

/**
 * A sticky device fault (illegal address, launch failure, trap, ...) reported by whichever driver
 * call came next. `kernels` are the suspects: the kernels launched since the last completed
 * synchronize (the last 16, oldest first), named in the message. The context is unusable
 * afterwards: restart the process.
 */
export class DeviceFaultError extends CudaError {
  readonly kernels: readonly string[];

  constructor(call: string, cudaCode: number, cudaName: string, description: string, detail = '') {
    const { kernels, count } = unsettledLaunches();
    const named =
      kernels.length === 0
        ? 'no kernel launched through tilekit since the last synchronize'
        : `after launching ${kernels.join(', ')}${count > kernels.length ? ` (the last ${kernels.length} of ${count})` : ''}`;
    super(call, cudaCode, cudaName, `${description}; device fault ${named}; the context is unusable now, restart the process`, detail);
    this.kernels = kernels;
  }
}

/** What the addon raises for a failed driver call: a `DeviceFaultError` for sticky codes, else a `CudaError`. */
export function cudaErrorFromDriver(call: string, cudaCode: number, cudaName: string, description: string, detail = ''): CudaError {
  return STICKY_CODES.has(cudaCode)
    ? new DeviceFaultError(call, cudaCode, cudaName, description, detail)
    : new CudaError(call, cudaCode, cudaName, description, detail);
}

/**
 * `DeviceBuffer.alloc` ran out of device memory: names the allocation (its label, else its size)
 * and what was free.
 */
export class DeviceOutOfMemoryError extends CudaError {
  readonly bytes: number;
  readonly label: string | undefined;

  constructor(cause: CudaError, bytes: number, label: string | undefined, free: number | undefined) {
    const what = label === undefined ? `${bytes} bytes` : `${label} (${bytes} bytes)`;
    const left = free === undefined ? '' : `; ${free} bytes free on the device`;
    super(cause.call, cause.cudaCode, cause.cudaName, `${cause.description}: allocating ${what}${left}`, cause.detail);
    this.bytes = bytes;
    this.label = label;
  }
}

/** No usable CUDA driver or device: raised by `Device.open` with the probe's reason. */
export class CudaUnavailableError extends TilekitError {
  readonly reason: string;

  constructor(reason: string) {
    super('runtime/cuda-unavailable', `no usable CUDA device: ${reason}`);
    this.reason = reason;
  }
}
