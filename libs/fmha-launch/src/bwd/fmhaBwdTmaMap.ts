// The TMA map of a backward operand (Q, K, V or dO) that a dq_dk_dv kernel loads by TMA: the dense
// backward's and FFPA's sm_90a one share it.
import type { AttentionTensorStrides, CheckedFmhaBwdTraits, FmhaBwdArgs } from '@tilekit/fmha';
import { getDType } from '@tilekit/numeric';
import { checkTiledTensorMap, type TiledTensorMapOptions } from '@tilekit/runtime';

/**
 * The element strides of a tensor argument must be 16-byte multiples for TMA; its address 16-byte
 * aligned. A tensor of 0 rows (every query or every key sequence empty: its head and batch strides
 * are 0, which TMA rejects) gets a placeholder map [hdim, 1, 1, 1] with the row stride everywhere;
 * dq_dk_dv never loads from it (no key tiles: no blocks; no query rows: no query tile is loaded).
 */
export function fmhaBwdTmaMap(
  dtype: 'fp16' | 'bf16',
  address: bigint,
  s: AttentionTensorStrides,
  heads: number,
  rows: number,
  hdim: number,
  batches: number,
  box: readonly number[],
): TiledTensorMapOptions {
  const e = getDType(dtype).bytes;
  return {
    dtype: dtype === 'fp16' ? 'float16' : 'bfloat16',
    swizzle: '128B',
    oobFill: 'zero',
    l2Promotion: '128B',
    address,
    globalDims: rows === 0 ? [hdim, 1, 1, 1] : [hdim, rows, heads, batches],
    // A unit dimension's stride is never used: any valid one (the row stride) will do.
    globalStrides:
      rows === 0
        ? [s.row * e, s.row * e, s.row * e]
        : [s.row * e, (heads === 1 ? s.row : s.head) * e, (batches === 1 ? s.row : s.batch) * e],
    boxDims: [...box],
  };
}

/**
 * The four TMA map arguments of a dq_dk_dv kernel (`q_map`, `k_map`, `v_map`, `do_map`): each operand's
 * map (`fmhaBwdTmaMap`, boxes Q/dO and K/V from the instance; group mode one batch of every row),
 * checked (`checkTiledTensorMap` throws on strides TMA cannot take), then encoded by `encode`.
 */
export function fmhaBwdTmaMapArgs(
  t: CheckedFmhaBwdTraits,
  args: FmhaBwdArgs,
  boxes: { readonly q: readonly number[]; readonly kv: readonly number[] },
  encode: (options: TiledTensorMapOptions) => Uint8Array,
): { q_map: Uint8Array; k_map: Uint8Array; v_map: Uint8Array; do_map: Uint8Array } {
  const batches = t.groupMode ? 1 : t.batch;
  const maps = {
    q: fmhaBwdTmaMap(t.dtype, args.q.ptr, args.q.strides, t.nheadQ, t.seqlenQ, t.hdimQ, batches, boxes.q),
    k: fmhaBwdTmaMap(t.dtype, args.k.ptr, args.k.strides, t.nheadK, t.seqlenK, t.hdimQ, batches, boxes.kv),
    v: fmhaBwdTmaMap(t.dtype, args.v.ptr, args.v.strides, t.nheadK, t.seqlenK, t.hdimV, batches, boxes.kv),
    dO: fmhaBwdTmaMap(t.dtype, args.dO.ptr, args.dO.strides, t.nheadQ, t.seqlenQ, t.hdimV, batches, boxes.q),
  };
  for (const m of Object.values(maps)) checkTiledTensorMap(m);
  return { q_map: encode(maps.q), k_map: encode(maps.k), v_map: encode(maps.v), do_map: encode(maps.dO) };
}
