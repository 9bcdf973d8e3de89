import { ArgumentError } from '@tilekit/numeric';

/**
 * A CUDA real architecture name as nvcc and NVRTC spell it: `sm_80`, `sm_90a`, `sm_100a`. The
 * `a` suffix selects arch-specific features (wgmma, setmaxnreg, TMA multicast on Hopper); such a
 * cubin runs only on that exact compute capability.
 */
export type CudaArch = `sm_${number}` | `sm_${number}a` | `sm_${number}f`;

/** Compute capability as the driver reports it. */
export interface ComputeCapability {
  readonly major: number;
  readonly minor: number;
}

const ARCH_PATTERN = /^sm_(\d{1,2})(\d)([af]?)$/;

/** Parses and validates an arch name; the inverse of `archForComputeCapability` for `a` names. */
export function parseArch(arch: string): ComputeCapability & { readonly suffix: '' | 'a' | 'f' } {
  const match = ARCH_PATTERN.exec(arch);
  if (!match) throw new ArgumentError('arch', 'must look like sm_80, sm_90a or sm_100a', arch);
  return { major: Number(match[1]), minor: Number(match[2]), suffix: (match[3] ?? '') as '' | 'a' | 'f' };
}

/**
 * The arch to compile for on a device: `sm_<major><minor>`, with the arch-specific `a` suffix
 * from compute capability 9.0 on (as Triton, CuTe DSL and TileLang choose), so that Hopper code
 * may use wgmma and TMA. 9.0 → `sm_90a`, 8.6 → `sm_86`.
 */
export function archForComputeCapability(cc: ComputeCapability): CudaArch {
  if (!Number.isInteger(cc.major) || !Number.isInteger(cc.minor) || cc.major < 1 || cc.minor < 0 || cc.minor > 9) {
    throw new ArgumentError('computeCapability', 'must have integer major >= 1 and minor in [0, 9]', cc);
  }
  const number = cc.major * 10 + cc.minor;
  return cc.major >= 9 ? `sm_${number}a` : `sm_${number}`;
}

/** True when a cubin built for `arch` can run on a device of capability `cc`. */
export function archRunsOn(arch: CudaArch, cc: ComputeCapability): boolean {
  const target = parseArch(arch);
  if (target.suffix === 'a') return target.major === cc.major && target.minor === cc.minor;
  if (target.suffix === 'f') return target.major === cc.major && target.minor <= cc.minor;
  // A plain cubin runs on the same major with an equal or higher minor.
  return target.major === cc.major && target.minor <= cc.minor;
}
