// The host side of the prefill indexer: checks (naming each argument), tensor maps, packing.
import { ArgumentProblems } from '@tilekit/numeric';
import { checkTiledTensorMap, type DeviceRange, type TiledTensorMapOptions } from '@tilekit/runtime';
import { DsaArgumentError } from '../dsaArgumentError.ts';
import { checkDsaIndexerBuffers } from './checkDsaIndexerBuffers.ts';
import type { DsaPackedLaunch } from '../dsaKernel.ts';
import { DSA_INDEX_HEAD_DIM, DSA_INDEX_HEADS, DSA_PAGE_TOKENS } from '../dsaShape.ts';
import { dsaIndexerPrefillInstanceFor } from './dsaIndexerPrefillCatalog.ts';
import type { DsaIndexerPrefillInstance } from './dsaIndexerPrefillInstance.ts';
import type { DsaTensorMapEncoder } from './dsaIndexerDecodeLauncher.ts';

/** The shape of one prefill-indexer launch (the windows are device arrays). */
export interface DsaIndexerPrefillConfig {
  /** Queries (tokens of this prefill chunk). */
  readonly seqQ: number;
  /** Keys in the contiguous index-key buffer. */
  readonly seqKv: number;
  /** Index query heads: 32 or 64. */
  readonly heads: number;
  /** Elements between logits rows (default seqKv). */
  readonly logitsStride?: number;
}

/** A checked config with its defaults. */
export interface CheckedDsaIndexerPrefillConfig extends DsaIndexerPrefillConfig {
  readonly logitsStride: number;
}

/**
 * The device buffers: q e4m3 [seqQ][heads][128] and k e4m3 [seqKv][128] and kScales fp32 [seqKv]
 * (all 16-byte aligned, for TMA), weights fp32 [seqQ][heads] (q scale and softmax scale folded
 * in), windowStart / windowEnd int32 [seqQ] (query t sees keys [start, end), clamped to
 * [0, seqKv); an empty window gives a row of −∞), logits fp32 [seqQ][logitsStride].
 */
export interface DsaIndexerPrefillBuffers {
  readonly q: DeviceRange;
  readonly weights: DeviceRange;
  readonly k: DeviceRange;
  readonly kScales: DeviceRange;
  readonly windowStart: DeviceRange;
  readonly windowEnd: DeviceRange;
  readonly logits: DeviceRange;
}

/** One packed prefill launch. */
export type DsaIndexerPrefillPackedLaunch = DsaPackedLaunch<DsaIndexerPrefillInstance>;

/**
 * Checks a prefill config: seqQ, seqKv int32 ≥ 1, heads ∈ {32, 64}, logitsStride ≥ seqKv.
 * @throws DsaArgumentError naming every broken field and its rule.
 */
export function checkDsaIndexerPrefillConfig(config: DsaIndexerPrefillConfig): CheckedDsaIndexerPrefillConfig {
  if (typeof config !== 'object' || config === null) throw new DsaArgumentError('config', 'must be an object', config);
  const v = new ArgumentProblems(DsaArgumentError);
  const int = (name: string, x: unknown, min: number): void => {
    if (typeof x !== 'number' || !Number.isSafeInteger(x) || x < min || x > 2 ** 31 - 1) v.report(name, `must be an int32 ≥ ${min}`, x);
  };
  int('seqQ', config.seqQ, 1);
  int('seqKv', config.seqKv, 1);
  if (!DSA_INDEX_HEADS.includes(config.heads)) v.report('heads', `must be one of ${DSA_INDEX_HEADS.join(', ')}`, config.heads);
  const logitsStride = config.logitsStride ?? config.seqKv;
  int('logitsStride', logitsStride, typeof config.seqKv === 'number' ? config.seqKv : 1);
  v.throwIfAny();
  return Object.freeze({ ...config, logitsStride });
}

/** Bytes each buffer of a checked config spans. */
export function dsaIndexerPrefillBufferBytes(c: CheckedDsaIndexerPrefillConfig): Readonly<Record<keyof DsaIndexerPrefillBuffers, number>> {
  return {
    q: c.seqQ * c.heads * DSA_INDEX_HEAD_DIM,
    weights: c.seqQ * c.heads * 4,
    k: c.seqKv * DSA_INDEX_HEAD_DIM,
    kScales: c.seqKv * 4,
    windowStart: c.seqQ * 4,
    windowEnd: c.seqQ * 4,
    logits: c.seqQ * c.logitsStride * 4,
  };
}

/**
 * The tensor maps: Q as [seqQ·heads rows][128 B] (box [128, 256]: a CTA's query block), K as
 * [seqKv rows][128 B] (box [128, 64]), both 128B-swizzled; the scales as fp32 [seqKv] (box [64]).
 * Out-of-range rows are zero-filled (ragged seqQ and seqKv).
 */
export function dsaIndexerPrefillTensorMaps(
  c: CheckedDsaIndexerPrefillConfig,
  q: bigint,
  k: bigint,
  kScales: bigint,
): { readonly q: TiledTensorMapOptions; readonly kv: TiledTensorMapOptions; readonly scale: TiledTensorMapOptions } {
  const swizzled = { dtype: 'uint8', swizzle: '128B', oobFill: 'zero', l2Promotion: '256B' } as const;
  const d = DSA_INDEX_HEAD_DIM;
  return {
    q: { ...swizzled, address: q, globalDims: [d, c.seqQ * c.heads], globalStrides: [d], boxDims: [d, 256] },
    kv: { ...swizzled, address: k, globalDims: [d, c.seqKv], globalStrides: [d], boxDims: [d, DSA_PAGE_TOKENS] },
    scale: {
      dtype: 'float32',
      swizzle: 'none',
      oobFill: 'zero',
      l2Promotion: 'none',
      address: kScales,
      globalDims: [c.seqKv],
      globalStrides: [],
      boxDims: [DSA_PAGE_TOKENS],
    },
  };
}

/**
 * Checks the buffers (each at least its bytes; q, k, kScales 16-byte aligned, the rest to their
 * element; logits overlapping no input) and packs the launch of the catalog instance.
 * @throws ArgumentError naming every broken buffer (`buffers.k`, …) and its rule.
 */
export function packDsaIndexerPrefill(
  c: CheckedDsaIndexerPrefillConfig,
  buffers: DsaIndexerPrefillBuffers,
  encode: DsaTensorMapEncoder,
): DsaIndexerPrefillPackedLaunch {
  checkDsaIndexerBuffers(buffers, dsaIndexerPrefillBufferBytes(c), {
    q: 16,
    weights: 4,
    k: 16,
    kScales: 16,
    windowStart: 4,
    windowEnd: 4,
    logits: 4,
  });
  const instance = dsaIndexerPrefillInstanceFor(c.heads);
  const maps = dsaIndexerPrefillTensorMaps(c, buffers.q.ptr, buffers.k.ptr, buffers.kScales.ptr);
  for (const m of [maps.q, maps.kv, maps.scale]) checkTiledTensorMap(m);
  const args = instance.signature.pack({
    q_map: encode(maps.q),
    kv_map: encode(maps.kv),
    scale_map: encode(maps.scale),
    weights: buffers.weights.ptr,
    window_start: buffers.windowStart.ptr,
    window_end: buffers.windowEnd.ptr,
    logits: buffers.logits.ptr,
    seq_q: c.seqQ,
    seq_kv: c.seqKv,
    logits_stride: c.logitsStride,
  });
  const l = instance.launch(c.seqQ);
  return { instance, grid: l.grid, block: l.block, sharedBytes: instance.sharedBytes, args };
}
