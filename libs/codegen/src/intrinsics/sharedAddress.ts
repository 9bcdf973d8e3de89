import { pointer, uint32, uint64, voidType } from '../cType.ts';
import { makeCall } from '../expr.ts';
import type { Expr } from '../expr.ts';
import { cast } from '../ops.ts';
import type { Target } from '../target.ts';
import { callHelper, defineDeviceHelper, requireAddress, requireIntrinsic } from './deviceHelper.ts';

/**
 * `tk_smem_addr(p)`: the 32-bit shared-state-space address of a generic pointer into shared
 * memory (`__cvta_generic_to_shared`), the form PTX `.shared` operands (`cp.async`, `ldmatrix`,
 * `mbarrier`, TMA) take in an `"r"` register.
 */
export const sharedAddressHelper = defineDeviceHelper(
  {
    name: 'tk_smem_addr',
    doc: 'The .shared state-space address of a generic pointer into shared memory (32 bits).',
    returns: uint32,
    params: { ptr: pointer(voidType, { const: true }) },
  },
  (b, { ptr }) => {
    b.return(cast(makeCall('__cvta_generic_to_shared', [ptr], uint64), uint32));
  },
);

/**
 * The shared-state-space address (`unsigned int`) of `ptr`, a pointer or array in shared memory.
 * CUDA targets only (TargetFeatureError on host and gfx942). Postcondition: the call requires
 * `tk_smem_addr`, emitted once per file.
 */
export function sharedAddress(target: Target, ptr: Expr): Expr {
  requireIntrinsic(target, 'shared-memory', 'shared-memory address conversion (__cvta_generic_to_shared)');
  requireAddress('ptr', ptr);
  return callHelper(sharedAddressHelper, [ptr]);
}
