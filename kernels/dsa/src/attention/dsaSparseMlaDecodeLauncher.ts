// The host side of the sparse MLA decode over the FP8 cache: the split choice, the workspace, buffer checks
// (naming each), and the packed launches (the decode, then the combine when it splits).
import type { DeviceRange } from '@tilekit/runtime';
import type { DsaSparseMlaDecodeConfig } from '../checkDsaSparseMlaConfig.ts';
import { DsaArgumentError } from '../dsaArgumentError.ts';
import type { DsaPackedLaunch } from '../dsaKernel.ts';
import { dsaMlaCacheSpan } from '../dsaMlaCacheLayout.ts';
import { DSA_SPARSE_MLA_QK_DIM, DSA_SPARSE_MLA_V_DIM } from '../dsaSparseMlaShape.ts';
import { checkDsaSparseMlaBuffers, type DsaBufferSize } from './checkDsaSparseMlaBuffers.ts';
import type { DsaSparseMlaCombineInstance } from './dsaSparseMlaCombineInstance.ts';
import { DSA_SPARSE_MLA_COMBINE, DSA_SPARSE_MLA_DECODE_FINAL, DSA_SPARSE_MLA_DECODE_PARTIAL } from './dsaSparseMlaDecodeCatalog.ts';
import type { DsaSparseMlaDecodeInstance } from './dsaSparseMlaDecodeInstance.ts';
import { DSA_SPARSE_MLA_HEAD_BLOCK, DSA_SPARSE_MLA_KEYS } from './dsaSparseMlaSmem.ts';

/**
 * The device buffers of a decode: q bf16 [b][sQ][hQ][576], the FP8 cache (numPages pages pageStrideBytes apart),
 * indices int32 [b][sQ][topk] (cache slots page · 64 + offset), topkLength int32 [b] and attnSink fp32 [hQ] exactly
 * when the config says so; out bf16 [b][sQ][hQ][512], lse and maxLogits fp32 [b][hQ][sQ]; workspace (when the
 * decode splits: dsaSparseMlaDecodeWorkspaceBytes) for the splits' fp32 O, LSE and max logits.
 */
export interface DsaSparseMlaDecodeBuffers {
  readonly q: DeviceRange;
  readonly cache: DeviceRange;
  readonly indices: DeviceRange;
  readonly topkLength?: DeviceRange | undefined;
  readonly attnSink?: DeviceRange | undefined;
  readonly out: DeviceRange;
  readonly lse: DeviceRange;
  readonly maxLogits: DeviceRange;
  readonly workspace?: DeviceRange | undefined;
}

/** How a decode is split: key tiles (32 index entries) per split and the number of splits. */
export interface DsaSparseMlaDecodeSplit {
  readonly splits: number;
  readonly tilesPerSplit: number;
}

/** The packed launches of one decode: the attention, and the combine when it splits. */
export interface DsaSparseMlaDecodePackedLaunches extends DsaSparseMlaDecodeSplit {
  readonly decode: DsaPackedLaunch<DsaSparseMlaDecodeInstance>;
  readonly combine?: DsaPackedLaunch<DsaSparseMlaCombineInstance> | undefined;
}

/**
 * The split of a checked config on `smCount` SMs: with B = b · sQ · hQ / 64 blocks and T = ⌈topk / 32⌉ tiles,
 * one split when B fills the SMs, else about smCount / B splits of an even number of tiles (the two consumer
 * warpgroups take alternate tiles), at most T / 2 of them. `requested` (≥ 1) overrides the count (clamped to T).
 */
export function dsaSparseMlaDecodeSplit(c: DsaSparseMlaDecodeConfig, smCount: number, requested?: number): DsaSparseMlaDecodeSplit {
  const tiles = Math.ceil(c.topk / DSA_SPARSE_MLA_KEYS);
  const blocks = c.b * c.sQ * (c.hQ / DSA_SPARSE_MLA_HEAD_BLOCK);
  if (requested !== undefined && (!Number.isSafeInteger(requested) || requested < 1))
    throw new DsaArgumentError('options.splits', 'must be a positive integer', requested);
  const want = requested ?? (blocks >= smCount ? 1 : Math.max(1, Math.min(Math.floor(tiles / 2), Math.round(smCount / blocks))));
  const per = Math.ceil(tiles / Math.min(want, tiles));
  const tilesPerSplit = requested === undefined && per > 1 ? per + (per % 2) : per;
  return { splits: Math.ceil(tiles / tilesPerSplit), tilesPerSplit };
}

/** Bytes of the workspace a decode split `splits` ways needs (0 for one split): fp32 O, LSE and max logits per split, 16-aligned. */
export function dsaSparseMlaDecodeWorkspaceBytes(c: DsaSparseMlaDecodeConfig, splits: number): number {
  if (splits <= 1) return 0;
  const pairs = splits * c.b * c.sQ * c.hQ;
  return pairs * DSA_SPARSE_MLA_V_DIM * 4 + 2 * Math.ceil((pairs * 4) / 16) * 16;
}

/** The bytes each buffer of a checked config needs when split `splits` ways (0: a buffer it does not read). */
export function dsaSparseMlaDecodeBufferBytes(
  c: DsaSparseMlaDecodeConfig,
  splits: number,
): Readonly<Record<keyof DsaSparseMlaDecodeBuffers, number>> {
  const rows = c.b * c.sQ * c.hQ;
  return {
    q: rows * DSA_SPARSE_MLA_QK_DIM * 2,
    cache: dsaMlaCacheSpan(c.numPages, c.pageStrideBytes),
    indices: c.b * c.sQ * c.topk * 4,
    topkLength: c.hasTopkLength ? c.b * 4 : 0,
    attnSink: c.hasSink ? c.hQ * 4 : 0,
    out: rows * DSA_SPARSE_MLA_V_DIM * 2,
    lse: rows * 4,
    maxLogits: rows * 4,
    workspace: dsaSparseMlaDecodeWorkspaceBytes(c, splits),
  };
}

/** Alignment of each buffer: 16 where the kernels read or write 16-byte words, else the element size. */
const ALIGN: Readonly<Record<keyof DsaSparseMlaDecodeBuffers, number>> = {
  q: 16,
  cache: 16,
  indices: 4,
  topkLength: 4,
  attnSink: 4,
  out: 16,
  lse: 4,
  maxLogits: 4,
  workspace: 16,
};

function sizes(c: DsaSparseMlaDecodeConfig, splits: number): { readonly [K in keyof DsaSparseMlaDecodeBuffers]-?: DsaBufferSize } {
  const bytes = dsaSparseMlaDecodeBufferBytes(c, splits);
  const entries = (Object.keys(ALIGN) as (keyof DsaSparseMlaDecodeBuffers)[]).map((k) => [k, [bytes[k], ALIGN[k]]] as const);
  return Object.fromEntries(entries) as { readonly [K in keyof DsaSparseMlaDecodeBuffers]-?: DsaBufferSize };
}

/**
 * Checks the buffers of a config checked by checkDsaSparseMlaDecodeConfig (each present, at least its size, aligned;
 * topkLength, attnSink and workspace exactly when the config or the split needs them; outputs overlapping nothing)
 * and packs the decode (grid b · sQ · hQ / 64 × splits) and, when it splits, the combine.
 * @throws DsaArgumentError naming `config.b` when the grid would pass 2^31 − 1 blocks, or `options.splits`;
 * ArgumentError naming every broken buffer and its rule.
 */
export function packDsaSparseMlaDecode(
  c: DsaSparseMlaDecodeConfig,
  buffers: DsaSparseMlaDecodeBuffers,
  options: { readonly smCount: number; readonly splits?: number },
): DsaSparseMlaDecodePackedLaunches {
  const rows = c.b * c.sQ;
  if (rows * (c.hQ / DSA_SPARSE_MLA_HEAD_BLOCK) > 2 ** 31 - 1)
    throw new DsaArgumentError('config.b', `times sQ · hQ / ${DSA_SPARSE_MLA_HEAD_BLOCK} blocks must fit a grid of 2^31 − 1`, c.b);
  const split = dsaSparseMlaDecodeSplit(c, options.smCount, options.splits);
  checkDsaSparseMlaBuffers(buffers, {
    sizes: sizes(c, split.splits),
    outputs: ['out', 'lse', 'maxLogits', 'workspace'],
    optional: [
      ['topkLength', c.hasTopkLength, 'hasTopkLength'],
      ['attnSink', c.hasSink, 'hasSink'],
      ['workspace', split.splits > 1, 'splits > 1 (see dsaSparseMlaDecodeWorkspaceBytes)'],
    ],
  });
  const common = {
    q: buffers.q.ptr,
    cache: buffers.cache.ptr,
    indices: buffers.indices.ptr,
    topk_length: buffers.topkLength?.ptr ?? 0n,
    attn_sink: buffers.attnSink?.ptr ?? 0n,
    page_stride: c.pageStrideBytes,
    num_pages: c.numPages,
    rows,
    s_q: c.sQ,
    h_q: c.hQ,
    topk: c.topk,
    tiles_per_split: split.tilesPerSplit,
    sm_scale: c.smScale,
  };
  const launch = <I extends DsaSparseMlaDecodeInstance | DsaSparseMlaCombineInstance>(
    instance: I,
    l: ReturnType<I['launch']>,
    args: DsaPackedLaunch<I>['args'],
  ): DsaPackedLaunch<I> => ({ instance, grid: l.grid, block: l.block, sharedBytes: instance.sharedBytes, args });
  if (split.splits === 1) {
    const i = DSA_SPARSE_MLA_DECODE_FINAL;
    const args = i.signature.pack({ ...common, out: buffers.out.ptr, lse: buffers.lse.ptr, max_logits: buffers.maxLogits.ptr });
    return { ...split, decode: launch(i, i.launch(rows, c.hQ, 1), args) };
  }
  const pairs = BigInt(split.splits * rows * c.hQ);
  const oAccum = buffers.workspace!.ptr;
  const lseAccum = oAccum + pairs * BigInt(DSA_SPARSE_MLA_V_DIM * 4);
  const maxAccum = lseAccum + ((pairs * 4n + 15n) / 16n) * 16n;
  const p = DSA_SPARSE_MLA_DECODE_PARTIAL;
  const decode = launch(
    p,
    p.launch(rows, c.hQ, split.splits),
    p.signature.pack({ ...common, out: oAccum, lse: lseAccum, max_logits: maxAccum }),
  );
  const m = DSA_SPARSE_MLA_COMBINE;
  const combineArgs = m.signature.pack({
    o_accum: oAccum,
    lse_accum: lseAccum,
    max_accum: maxAccum,
    attn_sink: buffers.attnSink?.ptr ?? 0n,
    out: buffers.out.ptr,
    max_logits: buffers.maxLogits.ptr,
    lse: buffers.lse.ptr,
    rows,
    s_q: c.sQ,
    h_q: c.hQ,
    splits: split.splits,
  });
  return { ...split, decode, combine: launch(m, m.launch(rows, c.hQ), combineArgs) };
}
