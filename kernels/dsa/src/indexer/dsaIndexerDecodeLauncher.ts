// The host side of the paged decode indexer: checks (naming each argument), tensor maps, packing, launch.
import { ArgumentProblems } from '@tilekit/numeric';
import { checkTiledTensorMap, type DeviceRange, type TiledTensorMapOptions } from '@tilekit/runtime';
import type { DsaPackedLaunch } from '../dsaKernel.ts';
import { DsaArgumentError } from '../dsaArgumentError.ts';
import { checkDsaIndexerBuffers } from './checkDsaIndexerBuffers.ts';
import { DSA_INDEX_HEAD_DIM, DSA_INDEX_HEADS, DSA_NEXT_N, DSA_PAGE_BYTES, DSA_PAGE_SCALE_OFFSET, DSA_PAGE_TOKENS } from '../dsaShape.ts';
import { dsaIndexerDecodeInstanceFor } from './dsaIndexerDecodeCatalog.ts';
import { DSA_PAGE_ROWS, type DsaIndexerDecodeInstance } from './dsaIndexerDecodeInstance.ts';

/** The shape of one decode-indexer launch (the per-sequence context lengths are a device array). */
export interface DsaIndexerDecodeConfig {
  readonly batch: number;
  /** Queries per sequence this step: 1 or 2. */
  readonly nextN: number;
  /** Index query heads: 32 or 64. */
  readonly heads: number;
  /** Logit columns written per row (positions ≥ a row's causal limit get −∞); ≥ every context length that matters. */
  readonly maxContext: number;
  /** Block-table width (pages per sequence): ≥ ⌈maxContext / 64⌉. */
  readonly maxPages: number;
  /** Pages in the cache. */
  readonly numPages: number;
  /** Elements between logits rows (default maxContext). */
  readonly logitsStride?: number;
}

/** A checked config with its defaults. */
export interface CheckedDsaIndexerDecodeConfig extends DsaIndexerDecodeConfig {
  readonly logitsStride: number;
}

/**
 * The device buffers of one launch: q e4m3 [batch][nextN][heads][128] (16-byte aligned), weights
 * fp32 [batch·nextN][heads] (q scale and softmax scale folded in), the paged cache
 * [numPages][8448 B] (16-byte aligned), blockTable int32 [batch][maxPages], contextLens int32
 * [batch] (a sequence's length including this step's nextN tokens), logits fp32
 * [batch·nextN][logitsStride].
 */
export interface DsaIndexerDecodeBuffers {
  readonly q: DeviceRange;
  readonly weights: DeviceRange;
  readonly cache: DeviceRange;
  readonly blockTable: DeviceRange;
  readonly contextLens: DeviceRange;
  readonly logits: DeviceRange;
}

/** One packed launch. */
export interface DsaIndexerDecodePackedLaunch extends DsaPackedLaunch<DsaIndexerDecodeInstance> {
  /** Logical pages each CTA covers. */
  readonly pagesPerCta: number;
}

/** Encodes a tiled tensor map (`encodeTensorMapTiled` on a device; tests pass a checker). */
export type DsaTensorMapEncoder = (options: TiledTensorMapOptions) => Uint8Array;

function integer(v: ArgumentProblems, name: string, x: unknown, min: number): number | undefined {
  return v.check(() => {
    if (typeof x !== 'number' || !Number.isSafeInteger(x) || x < min || x > 2 ** 31 - 1)
      throw new DsaArgumentError(name, `must be an int32 ≥ ${min}`, x);
    return x;
  });
}

/**
 * Checks a decode-indexer config: batch, maxContext, numPages ≥ 1; nextN ∈ {1, 2}; heads ∈ {32, 64};
 * maxPages ≥ ⌈maxContext / 64⌉; logitsStride ≥ maxContext.
 * @throws DsaArgumentError naming every broken field and its rule.
 */
export function checkDsaIndexerDecodeConfig(config: DsaIndexerDecodeConfig): CheckedDsaIndexerDecodeConfig {
  if (typeof config !== 'object' || config === null) throw new DsaArgumentError('config', 'must be an object', config);
  const v = new ArgumentProblems(DsaArgumentError);
  integer(v, 'batch', config.batch, 1);
  const maxContext = integer(v, 'maxContext', config.maxContext, 1);
  integer(v, 'numPages', config.numPages, 1);
  if (!DSA_NEXT_N.includes(config.nextN)) v.report('nextN', `must be one of ${DSA_NEXT_N.join(', ')}`, config.nextN);
  if (!DSA_INDEX_HEADS.includes(config.heads)) v.report('heads', `must be one of ${DSA_INDEX_HEADS.join(', ')}`, config.heads);
  const needPages = maxContext === undefined ? 1 : Math.ceil(maxContext / DSA_PAGE_TOKENS);
  integer(v, 'maxPages', config.maxPages, needPages);
  const logitsStride = config.logitsStride ?? config.maxContext;
  integer(v, 'logitsStride', logitsStride, maxContext ?? 1);
  v.throwIfAny();
  return Object.freeze({ ...config, logitsStride });
}

/** Bytes each buffer of a checked config spans. */
export function dsaIndexerDecodeBufferBytes(c: CheckedDsaIndexerDecodeConfig): Readonly<Record<keyof DsaIndexerDecodeBuffers, number>> {
  const rows = c.batch * c.nextN;
  return {
    q: rows * c.heads * DSA_INDEX_HEAD_DIM,
    weights: rows * c.heads * 4,
    cache: c.numPages * DSA_PAGE_BYTES,
    blockTable: c.batch * c.maxPages * 4,
    contextLens: c.batch * 4,
    logits: rows * c.logitsStride * 4,
  };
}

/**
 * The three tensor maps: Q as [batch·nextN·heads rows][128 B] (box [128, nextN·heads]); the cache
 * as rows of 128 B, 66 per page (box [128, 64] at row page·66: the page's e4m3 block); the scales as
 * [numPages][64] fp32 from cache + 8192 with an 8448-byte page stride (box [64, 1]). Q and the page
 * block use the 128B swizzle the wgmma reads; out-of-range boxes are zero-filled.
 */
export function dsaIndexerDecodeTensorMaps(
  c: CheckedDsaIndexerDecodeConfig,
  q: bigint,
  cache: bigint,
): { readonly q: TiledTensorMapOptions; readonly kv: TiledTensorMapOptions; readonly scale: TiledTensorMapOptions } {
  const n = c.nextN * c.heads;
  const swizzled = { dtype: 'uint8', swizzle: '128B', oobFill: 'zero', l2Promotion: '256B' } as const;
  return {
    q: {
      ...swizzled,
      address: q,
      globalDims: [DSA_INDEX_HEAD_DIM, c.batch * n],
      globalStrides: [DSA_INDEX_HEAD_DIM],
      boxDims: [DSA_INDEX_HEAD_DIM, n],
    },
    kv: {
      ...swizzled,
      address: cache,
      globalDims: [DSA_INDEX_HEAD_DIM, c.numPages * DSA_PAGE_ROWS],
      globalStrides: [DSA_INDEX_HEAD_DIM],
      boxDims: [DSA_INDEX_HEAD_DIM, DSA_PAGE_TOKENS],
    },
    scale: {
      dtype: 'float32',
      swizzle: 'none',
      oobFill: 'zero',
      l2Promotion: 'none',
      address: cache + BigInt(DSA_PAGE_SCALE_OFFSET),
      globalDims: [DSA_PAGE_TOKENS, c.numPages],
      globalStrides: [DSA_PAGE_BYTES],
      boxDims: [DSA_PAGE_TOKENS, 1],
    },
  };
}

/** CTAs per SM the decode indexer is sized for (its shared memory allows 3, its registers 2). */
const CTAS_PER_SM = 2;

/** Pages per CTA: the logical pages of every sequence spread over one wave of `smCount · 2` CTAs. */
export function dsaIndexerDecodePagesPerCta(c: CheckedDsaIndexerDecodeConfig, smCount: number): number {
  const pages = Math.ceil(c.maxContext / DSA_PAGE_TOKENS);
  return Math.max(1, Math.ceil((c.batch * pages) / (smCount * CTAS_PER_SM)));
}

/**
 * Checks the buffers (each at least its bytes; q and cache 16-byte aligned for TMA, the rest to
 * their element; logits overlapping no input) and packs the launch of the catalog instance.
 * @throws ArgumentError naming every broken buffer (`buffers.cache`, …) and its rule.
 */
export function packDsaIndexerDecode(
  c: CheckedDsaIndexerDecodeConfig,
  buffers: DsaIndexerDecodeBuffers,
  encode: DsaTensorMapEncoder,
  smCount: number,
): DsaIndexerDecodePackedLaunch {
  checkDsaIndexerBuffers(buffers, dsaIndexerDecodeBufferBytes(c), {
    q: 16,
    weights: 4,
    cache: 16,
    blockTable: 4,
    contextLens: 4,
    logits: 4,
  });
  const instance = dsaIndexerDecodeInstanceFor(c.heads, c.nextN);
  const maps = dsaIndexerDecodeTensorMaps(c, buffers.q.ptr, buffers.cache.ptr);
  for (const m of [maps.q, maps.kv, maps.scale]) checkTiledTensorMap(m);
  const pagesPerCta = dsaIndexerDecodePagesPerCta(c, smCount);
  const args = instance.signature.pack({
    q_map: encode(maps.q),
    kv_map: encode(maps.kv),
    scale_map: encode(maps.scale),
    weights: buffers.weights.ptr,
    block_table: buffers.blockTable.ptr,
    context_lens: buffers.contextLens.ptr,
    logits: buffers.logits.ptr,
    max_pages: c.maxPages,
    logits_stride: c.logitsStride,
    max_context: c.maxContext,
    pages_per_cta: pagesPerCta,
  });
  const l = instance.launch(c.batch, c.maxContext, pagesPerCta);
  return { instance, grid: l.grid, block: l.block, sharedBytes: instance.sharedBytes, args, pagesPerCta };
}
