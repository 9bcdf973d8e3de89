// The host side of the FP8 MLA latent cache writer: checks (naming each argument), packing, launch.
import { ArgumentError, ArgumentProblems } from '@tilekit/numeric';
import { checkDeviceRange, type DeviceRange } from '@tilekit/runtime';
import type { DsaPackedLaunch } from '../dsaKernel.ts';
import { DsaArgumentError } from '../dsaArgumentError.ts';
import { DSA_MLA_LATENT_DIM, DSA_MLA_PAGE_BYTES, DSA_MLA_PAGE_STRIDE_ALIGN, dsaMlaCacheSpan } from '../dsaMlaCacheLayout.ts';
import { DSA_MLA_CACHE_WRITER_CATALOG } from './dsaMlaCacheWriterCatalog.ts';
import type { DsaMlaCacheWriterInstance } from './dsaMlaCacheWriterInstance.ts';

/** The shape of one MLA cache write. */
export interface DsaMlaCacheWriteConfig {
  /** Tokens to write (0 launches one block that writes nothing). */
  readonly tokens: number;
  /** bf16 elements between consecutive tokens' rows: ≥ 576, ≤ 2^30 and a multiple of 8 (16-byte loads; default 576). */
  readonly latentStride?: number;
  /** Pages of the cache (slots 0 … numPages·64 − 1). */
  readonly numPages: number;
  /** Bytes between pages: ≥ 41984, ≤ 2^30 and a multiple of 16 (default 41984; FlashMLA's tests pad to 65 · 656). */
  readonly pageStride?: number;
}

/** A checked write config with its defaults. */
export interface CheckedDsaMlaCacheWriteConfig extends DsaMlaCacheWriteConfig {
  readonly latentStride: number;
  readonly pageStride: number;
}

/**
 * The device buffers: latent bf16 [tokens][latentStride] (16-byte aligned; 512 nope then 64 rope dims), slots int32
 * [tokens] (page·64 + offset, or −1 to skip), the cache of numPages pages `pageStride` bytes apart (16-byte aligned).
 */
export interface DsaMlaCacheWriteBuffers {
  readonly latent: DeviceRange;
  readonly slots: DeviceRange;
  readonly cache: DeviceRange;
}

/** The bytes each buffer of a write must hold. */
export interface DsaMlaCacheWriteBufferBytes {
  readonly latent: number;
  readonly slots: number;
  readonly cache: number;
}

/** One packed write. */
export type DsaMlaCacheWritePackedLaunch = DsaPackedLaunch<DsaMlaCacheWriterInstance>;

/** Reports `value` unless it is an integer in [min, max] and a multiple of `multiple`. */
function checkInt(v: ArgumentProblems, name: string, value: unknown, min: number, max: number, multiple = 1): void {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max)
    v.report(name, `must be an integer in [${min}, ${max}]`, value);
  else if (value % multiple !== 0) v.report(name, `must be a multiple of ${multiple}`, value);
}

/**
 * Checks a write config: tokens an int32 ≥ 0, numPages an int32 ≥ 1, latentStride in [576, 2^30] and a multiple of 8,
 * pageStride in [41984, 2^30] and a multiple of 16. Slots are device data: the kernel skips negative ones and those whose
 * page is ≥ numPages (a repeated slot is a race the caller must avoid).
 * @throws DsaArgumentError naming every broken field and its rule.
 */
export function checkDsaMlaCacheWriteConfig(config: DsaMlaCacheWriteConfig): CheckedDsaMlaCacheWriteConfig {
  if (typeof config !== 'object' || config === null) throw new DsaArgumentError('config', 'must be an object', config);
  const v = new ArgumentProblems(DsaArgumentError);
  checkInt(v, 'tokens', config.tokens, 0, 2 ** 31 - 1);
  checkInt(v, 'numPages', config.numPages, 1, 2 ** 31 - 1);
  const latentStride = config.latentStride ?? DSA_MLA_LATENT_DIM;
  checkInt(v, 'latentStride', latentStride, DSA_MLA_LATENT_DIM, 2 ** 30, 8);
  const pageStride = config.pageStride ?? DSA_MLA_PAGE_BYTES;
  checkInt(v, 'pageStride', pageStride, DSA_MLA_PAGE_BYTES, 2 ** 30, DSA_MLA_PAGE_STRIDE_ALIGN);
  v.throwIfAny();
  return Object.freeze({ ...config, latentStride, pageStride });
}

/** The bytes a checked write reads and writes: latent ((tokens − 1)·latentStride + 576)·2, slots 4·tokens, the cache span. */
export function dsaMlaCacheWriteBufferBytes(c: CheckedDsaMlaCacheWriteConfig): DsaMlaCacheWriteBufferBytes {
  return {
    latent: c.tokens === 0 ? 0 : ((c.tokens - 1) * c.latentStride + DSA_MLA_LATENT_DIM) * 2,
    slots: c.tokens * 4,
    cache: dsaMlaCacheSpan(c.numPages, c.pageStride),
  };
}

/**
 * Checks the buffers (latent and cache 16-byte aligned, each at least {@link dsaMlaCacheWriteBufferBytes}, slots 4-aligned;
 * the cache overlapping neither input) and packs the launch.
 * @throws ArgumentError naming every broken buffer and its rule.
 */
export function packDsaMlaCacheWrite(c: CheckedDsaMlaCacheWriteConfig, buffers: DsaMlaCacheWriteBuffers): DsaMlaCacheWritePackedLaunch {
  if (typeof buffers !== 'object' || buffers === null) throw new ArgumentError('buffers', 'must be an object of device buffers', buffers);
  const bytes = dsaMlaCacheWriteBufferBytes(c);
  const v = new ArgumentProblems(ArgumentError);
  v.check(() => checkDeviceRange('buffers.latent', buffers.latent, bytes.latent, 16));
  v.check(() => checkDeviceRange('buffers.slots', buffers.slots, bytes.slots, 4));
  v.check(() => checkDeviceRange('buffers.cache', buffers.cache, bytes.cache, 16));
  v.throwIfAny();
  for (const other of ['latent', 'slots'] as const) {
    const meets =
      buffers.cache.ptr < buffers[other].ptr + BigInt(bytes[other]) && buffers[other].ptr < buffers.cache.ptr + BigInt(bytes.cache);
    if (meets) v.report('buffers.cache', `must not overlap buffers.${other}`, `0x${buffers.cache.ptr.toString(16)}`);
  }
  v.throwIfAny();
  const instance = DSA_MLA_CACHE_WRITER_CATALOG[0]!;
  const args = instance.signature.pack({
    latent: buffers.latent.ptr,
    latent_stride: c.latentStride,
    slots: buffers.slots.ptr,
    cache: buffers.cache.ptr,
    page_stride: c.pageStride,
    num_pages: c.numPages,
    tokens: c.tokens,
  });
  const l = instance.launch(c.tokens);
  return { instance, grid: l.grid, block: l.block, args };
}
