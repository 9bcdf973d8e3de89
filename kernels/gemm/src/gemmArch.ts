// Which GEMM kernel family runs where. The sm_90a family (warp-specialized TMA + wgmma + setmaxnreg)
// needs an sm_90a device; the sm_80 family (cp.async + ldmatrix + mma.sync) runs on an sm_80 device
// and, rebuilt for sm_90a, on Hopper (tilekit's runtime loads a cubin only on the arch it was built
// for: an sm_80 cubin is not loaded on sm_90a). Pure: device archs are plain strings here.
import { sm80, sm90a, type Target } from '@tilekit/codegen';
import { ArgumentError } from '@tilekit/numeric';

/** The GEMM kernel families, as the example's `-arch` flag spells them. */
export const GEMM_ARCHS = Object.freeze(['sm90a', 'sm80'] as const);
export type GemmArch = (typeof GEMM_ARCHS)[number];

/** Device archs (`Device.arch`) some GEMM family is built for. */
export const GEMM_DEVICE_ARCHS = Object.freeze(['sm_90a', 'sm_80'] as const);

/** A kernel family and the codegen target its kernels are built for. */
export interface ResolvedGemmArch {
  readonly arch: GemmArch;
  readonly target: Target;
}

function checkDeviceArch(deviceArch: string): 'sm_90a' | 'sm_80' {
  if (deviceArch === 'sm_90a' || deviceArch === 'sm_80') return deviceArch;
  throw new ArgumentError(
    'deviceArch',
    `must be one of ${GEMM_DEVICE_ARCHS.join(', ')} (the archs the GEMM kernels are built for)`,
    deviceArch,
  );
}

/**
 * The family and build target for a device: `arch` when asked for explicitly, else the device's own
 * (sm_90a device → `sm90a`, sm_80 device → `sm80`; no device (`deviceArch` undefined) → `sm90a`).
 * sm_80 kernels are built for the device's arch (sm_80, or sm_90a on Hopper; without a device for
 * sm_80). Throws `ArgumentError` naming `deviceArch` for an arch no family is built for, and `arch`
 * when `sm90a` is asked for on a device that is not sm_90a.
 * Postcondition (tested): `target.name` equals `deviceArch` whenever a device is given.
 */
export function resolveGemmArch(options: { readonly arch?: GemmArch; readonly deviceArch?: string } = {}): ResolvedGemmArch {
  const device = options.deviceArch === undefined ? undefined : checkDeviceArch(options.deviceArch);
  const arch = options.arch ?? (device === 'sm_80' ? 'sm80' : 'sm90a');
  if (!(GEMM_ARCHS as readonly string[]).includes(arch)) throw new ArgumentError('arch', `must be one of ${GEMM_ARCHS.join(', ')}`, arch);
  if (arch === 'sm90a') {
    if (device !== undefined && device !== 'sm_90a')
      throw new ArgumentError('arch', 'sm90a kernels (wgmma, TMA, setmaxnreg) run only on an sm_90a device', `${arch} on ${device}`);
    return { arch, target: sm90a };
  }
  return { arch, target: device === 'sm_90a' ? sm90a : sm80 };
}
