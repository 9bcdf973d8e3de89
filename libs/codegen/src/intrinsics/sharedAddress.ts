import { ArgumentError } from '@tilekit/numeric';
import type { BlockBuilder } from '../blockBuilder.ts';
import { pointer, uint8, uint32, uint64, voidType } from '../cType.ts';
import { makeCall } from '../expr.ts';
import type { Expr } from '../expr.ts';
import { add, bitAnd, cast, sub, variable } from '../ops.ts';
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

/** What {@link declareAlignedDynamicShared} declares: the aligned base as a generic pointer and as a 32-bit shared address. */
export interface AlignedDynamicShared {
  /** `unsigned char*` to the first `alignment`-aligned byte of the dynamic shared memory. */
  readonly smem: Expr;
  /** The same byte as a shared-window address (what TMA, mbarrier and wgmma descriptors take). */
  readonly smemAddr: Expr;
}

/**
 * Declares the kernel's dynamic shared memory (`extern __shared__ __align__(A) unsigned char
 * name[]`, the one declaration without a builder form) and rounds its start up to `alignment`
 * bytes at run time: the toolchain does not promise the requested alignment for the dynamic
 * window, while 128B-swizzled TMA/wgmma tiles need 1024. The launch must request `alignment` bytes
 * of slack. Emits locals `smem_raw`, `smem_pad`, `smem`, `smem_addr`.
 */
export function declareAlignedDynamicShared(b: BlockBuilder, target: Target, name: string, alignment = 1024): AlignedDynamicShared {
  if (!Number.isSafeInteger(alignment) || alignment < 16 || (alignment & (alignment - 1)) !== 0)
    throw new ArgumentError('alignment', 'must be a power of two ≥ 16', alignment);
  b.verbatim(`extern __shared__ __align__(${alignment}) unsigned char ${name}[];`);
  const raw = variable(name, pointer(uint8));
  const rawAddr = b.let('smem_raw', uint32, sharedAddress(target, raw));
  const pad = b.let('smem_pad', uint32, bitAnd(sub(alignment, bitAnd(rawAddr, alignment - 1)), alignment - 1));
  return { smem: b.let('smem', pointer(uint8), add(raw, pad)), smemAddr: b.let('smem_addr', uint32, add(rawAddr, pad)) };
}
