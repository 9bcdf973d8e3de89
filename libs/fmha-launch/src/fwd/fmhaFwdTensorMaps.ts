// The TMA maps of Q, K and V of an sm_90a forward attention launch (dense or sparse).
import type { AttentionTensorStrides, FmhaFwdLaunchProblem } from '@tilekit/fmha';
import { getDType } from '@tilekit/numeric';
import type { TiledTensorMapOptions } from '@tilekit/runtime';
import type { PreparedFmhaFwdLaunch } from './preparedFmhaFwdLaunch.ts';

/**
 * The TMA maps (dimension 0 innermost): X is [hdim, rows, heads, batches] with byte strides
 * (row, head, batch)·e and the box [64, tile rows, 1, 1] (64 head-dim elements = one 128-byte
 * swizzle row; a head dim that is not a multiple of 64 reads zeros past its end). Group mode has
 * one "batch" holding every sequence's rows. A tensor of 0 rows (every query or every key sequence
 * empty) gets a placeholder map [hdim, 1, 1, 1] with the row stride everywhere: its head and batch
 * strides are 0, which TMA rejects, and the kernels never load from it (a block whose query tile
 * lies past its sequence returns before any load; with no keys it issues no K/V loads).
 */
export function fmhaFwdTensorMaps(
  instance: { readonly tmaBoxes: { readonly q: readonly number[]; readonly kv: readonly number[] } },
  p: FmhaFwdLaunchProblem,
  q: bigint,
  k: bigint,
  v: bigint,
): PreparedFmhaFwdLaunch['maps'] {
  const e = getDType(p.dtype).bytes;
  const dtype = p.dtype === 'fp16' ? 'float16' : 'bfloat16';
  const batches = p.mode === 'group' ? 1 : p.batch;
  const boxes = instance.tmaBoxes;
  const map = (
    address: bigint,
    s: AttentionTensorStrides,
    heads: number,
    rows: number,
    hdim: number,
    box: readonly number[],
  ): TiledTensorMapOptions => ({
    dtype,
    swizzle: '128B',
    oobFill: 'zero',
    l2Promotion: '128B',
    address,
    // 0 rows: a placeholder of one row, one head, one batch (see above).
    globalDims: rows === 0 ? [hdim, 1, 1, 1] : [hdim, rows, heads, batches],
    // A unit dimension's stride is never used: any valid one (the row stride) will do.
    globalStrides:
      rows === 0
        ? [s.row * e, s.row * e, s.row * e]
        : [s.row * e, (heads === 1 ? s.row : s.head) * e, (batches === 1 ? s.row : s.batch) * e],
    boxDims: [...box],
  });
  return {
    q: map(q, p.qStrides, p.nheadQ, p.rowsQ, p.hdimQ, boxes.q),
    k: map(k, p.kStrides, p.nheadK, p.rowsK, p.hdimQ, boxes.kv),
    v: map(v, p.vStrides, p.nheadK, p.rowsK, p.hdimV, boxes.kv),
  };
}
