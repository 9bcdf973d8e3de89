import { loadAddon } from './addon.ts';

/**
 * What this machine can do with CUDA. `driver` is true when libcuda.so.1 loaded and `cuInit`
 * succeeded; `deviceCount` is 0 whenever it is false; `nvrtc` says whether NVRTC loaded; `reason`
 * explains a false `driver` or a zero `deviceCount`; `addon` is false when the native addon
 * itself is missing (then everything else is false and `reason` says how to build it).
 */
export interface ProbeResult {
  readonly addon: boolean;
  readonly driver: boolean;
  readonly driverVersion?: number;
  readonly deviceCount: number;
  readonly nvrtc: boolean;
  readonly nvrtcVersion?: string;
  readonly libcuda?: string;
  readonly libnvrtc?: string;
  readonly reason?: string;
  readonly nvrtcReason?: string;
}

/**
 * Reports the CUDA driver, device count and NVRTC availability. Never throws: every failure,
 * the addon's own absence included, becomes `reason`. Safe to call on CPU-only CI machines,
 * so tests can skip with the reason.
 */
export function probe(): ProbeResult {
  try {
    return { addon: true, ...loadAddon().probe() };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { addon: false, driver: false, deviceCount: 0, nvrtc: false, reason, nvrtcReason: reason };
  }
}

/** "CUDA 13.0" from a driver version number such as 13000. */
export function formatDriverVersion(version: number): string {
  return `CUDA ${Math.floor(version / 1000)}.${Math.floor((version % 1000) / 10)}`;
}
