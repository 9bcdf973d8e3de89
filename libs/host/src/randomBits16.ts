import { ArgumentError, type DType, type DTypeName, getDType } from '@tilekit/numeric';
import { type FillSpec, fillTensor } from './fill.ts';
import { HostTensor } from './hostTensor.ts';
import type { Seed } from './prng.ts';

/** The default spread of `randomBits16`: uniform in [−1, 1), so products and sums stay small. */
const UNIT_INTERVAL: FillSpec = { kind: 'uf', min: -1, max: 1 };

/**
 * `count` seeded random elements of a 16-bit dtype (fp16 or bf16), as the bit patterns to upload
 * to a device. The values are drawn by `fillValues(spec, count, seed)` (default uniform in
 * [−1, 1)) and rounded to the dtype with saturation, exactly as `fillTensor` fills a tensor, so a
 * CPU reference that decodes these bits sees the very numbers the device does.
 * Postconditions (tested): same (dtype, count, seed, spec) ⇒ same bits; every pattern decodes
 * to a finite value in the spec's range; the bits equal `fillTensor` of a [count] tensor.
 * @throws ArgumentError when the dtype is not 16 bits wide or `count` is not a non-negative integer.
 */
export function randomBits16(dtype: DType | DTypeName, count: number, seed: Seed, spec: FillSpec | string = UNIT_INTERVAL): Uint16Array {
  const d = typeof dtype === 'string' ? getDType(dtype) : dtype;
  if (d.bits !== 16) throw new ArgumentError('randomBits16', 'dtype must be 16 bits wide (fp16, bf16)', d.name);
  if (!Number.isSafeInteger(count) || count < 0) throw new ArgumentError('randomBits16', 'count must be a non-negative integer', count);
  return fillTensor(HostTensor.empty(d, [count]), spec, seed).storage as Uint16Array;
}
