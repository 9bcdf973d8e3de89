// Fake device ranges for launcher specs: addresses no GPU ever sees, laid out so the packers' checks can be exercised.
import type { DeviceRange } from '@tilekit/runtime';

/**
 * Disjoint fake device ranges of exactly the given byte counts, each 256-aligned with a 256-byte gap after it (a name
 * whose count is 0 is left out, as an optional buffer the config does not read).
 */
export function dsaFakeDeviceRanges<K extends string>(bytes: Readonly<Record<K, number>>): Partial<Record<K, DeviceRange>> {
  let ptr = 0x10000n;
  const out: Partial<Record<K, DeviceRange>> = {};
  for (const [k, n] of Object.entries(bytes) as [K, number][]) {
    if (n === 0) continue;
    out[k] = { ptr, bytes: n };
    ptr += BigInt(Math.ceil(n / 256) * 256 + 256);
  }
  return out;
}
