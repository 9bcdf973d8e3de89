import { ArgumentError } from '@tilekit/numeric';

/** A range of device memory: a `DeviceBuffer` or a view of one (what launchers take for each tensor). */
export interface DeviceRange {
  readonly ptr: bigint;
  readonly bytes: number;
}

/**
 * Checks a launcher argument before any launch: `range` must be a device range of at least
 * `needed` bytes whose address is a multiple of `align` (default 1). Throws `ArgumentError` naming
 * `name` and the rule; returns the range.
 */
export function checkDeviceRange(name: string, range: DeviceRange | undefined, needed: number, align = 1): DeviceRange {
  if (typeof range !== 'object' || range === null || typeof range.ptr !== 'bigint' || !Number.isSafeInteger(range.bytes)) {
    throw new ArgumentError(name, 'must be a device buffer (an object with a bigint ptr and a byte count)', range);
  }
  if (range.bytes < needed) throw new ArgumentError(name, `must hold at least ${needed} bytes`, range.bytes);
  if (align > 1 && range.ptr % BigInt(align) !== 0n)
    throw new ArgumentError(name, `address must be aligned to ${align} bytes`, `0x${range.ptr.toString(16)}`);
  return range;
}
