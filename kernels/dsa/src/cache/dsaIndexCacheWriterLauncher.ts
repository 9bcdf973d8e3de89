// The host side of the index-key cache writer: checks (naming each argument), packing, launch.
import { ArgumentError, ArgumentProblems } from '@tilekit/numeric';
import { checkDeviceRange, type DeviceRange } from '@tilekit/runtime';
import type { DsaPackedLaunch } from '../dsaKernel.ts';
import { DsaArgumentError } from '../dsaArgumentError.ts';
import { DSA_INDEX_HEAD_DIM, DSA_PAGE_BYTES, type DsaScaleFormat } from '../dsaShape.ts';
import { DSA_INDEX_CACHE_WRITER_CATALOG } from './dsaIndexCacheWriterCatalog.ts';
import type { DsaIndexCacheWriterInstance } from './dsaIndexCacheWriterInstance.ts';

/** The shape of one cache write. */
export interface DsaIndexCacheWriteConfig {
  /** Tokens to write (0 launches one block that writes nothing). */
  readonly tokens: number;
  /** bf16 elements between consecutive tokens' keys: ≥ 128 and a multiple of 4 (default 128). */
  readonly keyStride?: number;
  /** Pages of the cache. */
  readonly numPages: number;
  readonly scaleFormat: DsaScaleFormat;
}

/** A checked write config with its defaults. */
export interface CheckedDsaIndexCacheWriteConfig extends DsaIndexCacheWriteConfig {
  readonly keyStride: number;
}

/**
 * The device buffers: keys bf16 [tokens][keyStride] (8-byte aligned), slots int32 [tokens] (page·64 + offset, or −1 to
 * skip), the cache [numPages][8448 B].
 */
export interface DsaIndexCacheWriteBuffers {
  readonly keys: DeviceRange;
  readonly slots: DeviceRange;
  readonly cache: DeviceRange;
}

/** One packed write. */
export type DsaIndexCacheWritePackedLaunch = DsaPackedLaunch<DsaIndexCacheWriterInstance>;

/**
 * Checks a write config: tokens an int32 ≥ 0, numPages ≥ 1, keyStride ≥ 128 and a multiple of 4,
 * scaleFormat fp32 or ue8m0. Slots are device data: the kernel skips negative ones; a slot past the
 * cache is the caller's bug (the slots buffer is not read back).
 * @throws DsaArgumentError naming every broken field and its rule.
 */
export function checkDsaIndexCacheWriteConfig(config: DsaIndexCacheWriteConfig): CheckedDsaIndexCacheWriteConfig {
  if (typeof config !== 'object' || config === null) throw new DsaArgumentError('config', 'must be an object', config);
  const v = new ArgumentProblems(DsaArgumentError);
  const int = (name: string, x: unknown, min: number): void => {
    if (typeof x !== 'number' || !Number.isSafeInteger(x) || x < min || x > 2 ** 31 - 1) v.report(name, `must be an int32 ≥ ${min}`, x);
  };
  int('tokens', config.tokens, 0);
  int('numPages', config.numPages, 1);
  const keyStride = config.keyStride ?? DSA_INDEX_HEAD_DIM;
  int('keyStride', keyStride, DSA_INDEX_HEAD_DIM);
  if (typeof keyStride === 'number' && keyStride % 4 !== 0) v.report('keyStride', 'must be a multiple of 4 (8-byte key loads)', keyStride);
  if (config.scaleFormat !== 'fp32' && config.scaleFormat !== 'ue8m0') v.report('scaleFormat', 'must be fp32 or ue8m0', config.scaleFormat);
  v.throwIfAny();
  return Object.freeze({ ...config, keyStride });
}

/**
 * Checks the buffers (keys ≥ ((tokens − 1)·keyStride + 128)·2 bytes, 8-aligned; slots ≥ 4·tokens;
 * cache ≥ numPages·8448, 16-aligned; the cache overlapping neither input) and packs the launch.
 * @throws ArgumentError naming every broken buffer and its rule.
 */
export function packDsaIndexCacheWrite(
  c: CheckedDsaIndexCacheWriteConfig,
  buffers: DsaIndexCacheWriteBuffers,
): DsaIndexCacheWritePackedLaunch {
  if (typeof buffers !== 'object' || buffers === null) throw new ArgumentError('buffers', 'must be an object of device buffers', buffers);
  const bytes = {
    keys: c.tokens === 0 ? 0 : ((c.tokens - 1) * c.keyStride + DSA_INDEX_HEAD_DIM) * 2,
    slots: c.tokens * 4,
    cache: c.numPages * DSA_PAGE_BYTES,
  };
  const v = new ArgumentProblems(ArgumentError);
  v.check(() => checkDeviceRange('buffers.keys', buffers.keys, bytes.keys, 8));
  v.check(() => checkDeviceRange('buffers.slots', buffers.slots, bytes.slots, 4));
  v.check(() => checkDeviceRange('buffers.cache', buffers.cache, bytes.cache, 16));
  v.throwIfAny();
  for (const other of ['keys', 'slots'] as const) {
    const meets =
      buffers.cache.ptr < buffers[other].ptr + BigInt(bytes[other]) && buffers[other].ptr < buffers.cache.ptr + BigInt(bytes.cache);
    if (meets) v.report('buffers.cache', `must not overlap buffers.${other}`, `0x${buffers.cache.ptr.toString(16)}`);
  }
  v.throwIfAny();
  const instance = DSA_INDEX_CACHE_WRITER_CATALOG.find((i) => i.policy.scaleFormat === c.scaleFormat)!;
  const args = instance.signature.pack({
    keys: buffers.keys.ptr,
    key_stride: c.keyStride,
    slots: buffers.slots.ptr,
    cache: buffers.cache.ptr,
    tokens: c.tokens,
  });
  const l = instance.launch(c.tokens);
  return { instance, grid: l.grid, block: l.block, args };
}
