// A device buffer of a forward attention launch, checked for its size and start alignment.
import { ArgumentError } from '@tilekit/numeric';
import { checkDeviceRange, type DeviceRange } from '@tilekit/runtime';

/** One buffer holding `bytes` and starting on an `align`-byte boundary (the alignment message names `why`). */
export function checkAlignedDeviceRange(
  name: string,
  range: DeviceRange | undefined,
  bytes: number,
  align: number,
  why: string,
): DeviceRange {
  const r = checkDeviceRange(name, range, bytes);
  if (r.ptr % BigInt(align) !== 0n)
    throw new ArgumentError(name, `address must be aligned to ${align} bytes${why}`, `0x${r.ptr.toString(16)}`);
  return r;
}
