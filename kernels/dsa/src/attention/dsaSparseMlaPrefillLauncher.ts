// The host side of the sparse MLA prefill: buffer checks (naming each), packing and the launch geometry.
import { ArgumentError } from '@tilekit/numeric';
import type { DeviceRange } from '@tilekit/runtime';
import type { DsaSparseMlaPrefillConfig } from '../checkDsaSparseMlaConfig.ts';
import { DsaArgumentError } from '../dsaArgumentError.ts';
import type { DsaPackedLaunch } from '../dsaKernel.ts';
import { DSA_SPARSE_MLA_QK_DIM, DSA_SPARSE_MLA_V_DIM } from '../dsaSparseMlaShape.ts';
import { checkDsaSparseMlaBuffers, type DsaBufferSize } from './checkDsaSparseMlaBuffers.ts';
import { DSA_SPARSE_MLA_PREFILL_CATALOG } from './dsaSparseMlaPrefillCatalog.ts';
import type { DsaSparseMlaPrefillInstance } from './dsaSparseMlaPrefillInstance.ts';
import { DSA_SPARSE_MLA_HEAD_BLOCK } from './dsaSparseMlaSmem.ts';

/**
 * The device buffers of a prefill: q bf16 [sQ][hQ][576], kv bf16 [sKv][576], indices int32
 * [sQ][topk], topkLength int32 [sQ] and attnSink fp32 [hQ] exactly when the config says so; out
 * bf16 [sQ][hQ][512], maxLogits and lse fp32 [sQ][hQ].
 */
export interface DsaSparseMlaPrefillBuffers {
  readonly q: DeviceRange;
  readonly kv: DeviceRange;
  readonly indices: DeviceRange;
  readonly topkLength?: DeviceRange | undefined;
  readonly attnSink?: DeviceRange | undefined;
  readonly out: DeviceRange;
  readonly maxLogits: DeviceRange;
  readonly lse: DeviceRange;
}

/** One packed prefill launch. */
export type DsaSparseMlaPrefillPackedLaunch = DsaPackedLaunch<DsaSparseMlaPrefillInstance>;

/** Bytes and alignment of every buffer of a checked config. */
function sizes(c: DsaSparseMlaPrefillConfig): { readonly [K in keyof DsaSparseMlaPrefillBuffers]-?: DsaBufferSize } {
  const rows = c.sQ * c.hQ;
  return {
    q: [rows * DSA_SPARSE_MLA_QK_DIM * 2, 16],
    kv: [c.sKv * DSA_SPARSE_MLA_QK_DIM * 2, 16],
    indices: [c.sQ * c.topk * 4, 4],
    topkLength: [c.sQ * 4, 4],
    attnSink: [c.hQ * 4, 4],
    out: [rows * DSA_SPARSE_MLA_V_DIM * 2, 16],
    maxLogits: [rows * 4, 4],
    lse: [rows * 4, 4],
  };
}

/**
 * Checks the buffers of a config checked by checkDsaSparseMlaPrefillConfig (each present, at least
 * its size, aligned; topkLength and attnSink exactly when the config has them; outputs overlapping
 * nothing) and packs the launch of the catalog instance: one block per token and 64 heads.
 * @throws DsaArgumentError naming `config.sQ` when the grid would pass 2^31 − 1 blocks; ArgumentError naming every
 * broken buffer and its rule.
 */
export function packDsaSparseMlaPrefill(
  c: DsaSparseMlaPrefillConfig,
  buffers: DsaSparseMlaPrefillBuffers,
): DsaSparseMlaPrefillPackedLaunch {
  if (typeof buffers !== 'object' || buffers === null) throw new ArgumentError('buffers', 'must be an object of device buffers', buffers);
  const blocks = c.sQ * (c.hQ / DSA_SPARSE_MLA_HEAD_BLOCK);
  if (blocks > 2 ** 31 - 1)
    throw new DsaArgumentError('config.sQ', `times hQ / ${DSA_SPARSE_MLA_HEAD_BLOCK} blocks must fit a grid of 2^31 − 1`, c.sQ);
  checkDsaSparseMlaBuffers(buffers, {
    sizes: sizes(c),
    outputs: ['out', 'maxLogits', 'lse'],
    optional: [
      ['topkLength', c.hasTopkLength, 'hasTopkLength'],
      ['attnSink', c.hasSink, 'hasSink'],
    ],
  });
  const instance = DSA_SPARSE_MLA_PREFILL_CATALOG[0]!;
  const args = instance.signature.pack({
    q: buffers.q.ptr,
    kv: buffers.kv.ptr,
    indices: buffers.indices.ptr,
    topk_length: buffers.topkLength?.ptr ?? 0n,
    attn_sink: buffers.attnSink?.ptr ?? 0n,
    out: buffers.out.ptr,
    max_logits: buffers.maxLogits.ptr,
    lse: buffers.lse.ptr,
    s_q: c.sQ,
    h_q: c.hQ,
    s_kv: c.sKv,
    topk: c.topk,
    kv_stride: DSA_SPARSE_MLA_QK_DIM,
    sm_scale: c.smScale,
  });
  const l = instance.launch(c.sQ, c.hQ);
  return { instance, grid: l.grid, block: l.block, sharedBytes: instance.sharedBytes, args };
}
