import { cast } from '@tilekit/codegen';
import type { DTypeName } from '@tilekit/numeric';
import { embedEncoding, hRef, mmaSyncAtoms, rRef, TileDistributionEncoding, type DistributedTensor, type ThreadScope } from '@tilekit/tile';
import { BlockGemmPolicyError } from './blockGemmWgmmaSs.ts';

/** A block tile over a grid of warps issuing `mma.sync.m16n8k16` (warps row-major: warp id = wm·WN + wn). */
export interface MmaSyncWarpTiling {
  /** fp16 or bf16 inputs (fp32 accumulation). */
  readonly dtype: DTypeName;
  /** Warps along M and along N. */
  readonly warps: readonly [number, number];
}

function checkTiling(what: string, t: MmaSyncWarpTiling): void {
  if (t.dtype !== 'fp16' && t.dtype !== 'bf16') throw new BlockGemmPolicyError(`${what} dtype`, 'must be fp16 or bf16', String(t.dtype));
  const [wm, wn] = t.warps;
  for (const [axis, w] of [
    ['warps[0] (M)', wm],
    ['warps[1] (N)', wn],
  ] as const) {
    if (!Number.isSafeInteger(w) || w < 1 || (w & (w - 1)) !== 0)
      throw new BlockGemmPolicyError(`${what} ${axis}`, 'must be a power of two ≥ 1', String(w));
  }
}

function repeats(what: string, extent: number, per: number, name: string, even = false): number {
  const r = extent / per;
  if (!Number.isSafeInteger(extent) || !Number.isSafeInteger(r) || r < 1 || (even && r % 2 !== 0)) {
    throw new BlockGemmPolicyError(`${what} ${name}`, `must be a positive multiple of ${even ? 2 * per : per}`, String(extent));
  }
  return r;
}

/**
 * The fp32 accumulator of a `tileM × tileN` block tile as a distributed tensor over the warp grid
 * (P = [warp, lane]): warp (wm, wn) owns the m16n8 tiles (i, j) at rows (i·WM + wm)·16 and columns
 * ((j/2)·WN + wn)·16 + (j mod 2)·8 — n8 tiles come in adjacent pairs, so one `ldmatrix.x4` loads
 * the B fragments of two of them and two of them form one k16 A fragment of a next GEMM. Inside a
 * tile the layout is tile's mma.sync C fragment. Thread buffer: d = 4·(i·nRep + j) + c, c the PTX
 * accumulator index c0..c3 (tested), so the 4 floats of tile (i, j) are contiguous.
 */
export function mmaSyncCEncoding(tiling: MmaSyncWarpTiling & { readonly tileM: number; readonly tileN: number }): TileDistributionEncoding {
  checkTiling('mmaSyncCEncoding', tiling);
  const [wm, wn] = tiling.warps;
  const mRep = repeats('mmaSyncCEncoding', tiling.tileM, 16 * wm, 'tileM');
  const nRep = repeats('mmaSyncCEncoding', tiling.tileN, 8 * wn, 'tileN', true);
  const outer = new TileDistributionEncoding({
    hs: [
      [mRep, wm],
      [nRep / 2, wn, 2],
    ],
    ps: [[hRef(0, 1), hRef(1, 1)]],
    ys: [hRef(0, 0), hRef(1, 0), hRef(1, 2)],
  });
  return embedEncoding(outer, mmaSyncAtoms('m16n8k16', tiling.dtype).c.encoding);
}

/**
 * The A operand (`tileM × tileK`) held in registers in the mma.sync A-fragment distribution: warp
 * (wm, wn) holds the m16k16 fragments (i, kk) at rows (i·WM + wm)·16, columns 16·kk (every N warp a
 * replica: an R digit). Thread buffer: d = 8·(i·kRep + kk) + e, e the PTX element index a0..a7, so
 * the 4 packed registers of fragment (i, kk) are elements 8·(i·kRep + kk) … + 7 in pairs.
 */
export function mmaSyncARegisterEncoding(
  tiling: MmaSyncWarpTiling & { readonly tileM: number; readonly tileK: number },
): TileDistributionEncoding {
  checkTiling('mmaSyncARegisterEncoding', tiling);
  const [wm, wn] = tiling.warps;
  const mRep = repeats('mmaSyncARegisterEncoding', tiling.tileM, 16 * wm, 'tileM');
  const kRep = repeats('mmaSyncARegisterEncoding', tiling.tileK, 16, 'tileK');
  const outer = new TileDistributionEncoding({
    rs: [wn],
    hs: [[mRep, wm], [kRep]],
    ps: [[hRef(0, 1), rRef(0)]],
    ys: [hRef(0, 0), hRef(1, 0)],
  });
  return embedEncoding(outer, mmaSyncAtoms('m16n8k16', tiling.dtype).a.encoding);
}

/**
 * Register reuse between two chained GEMMs (attention's S = Q·Kᵀ then O = P·V): the fp32
 * accumulator of a `tileM × tileN` block tile ({@link mmaSyncCEncoding}, warps only along M) read
 * as the A operand `tileM × tileK` (tileK = tileN) of the next mma.sync. Two adjacent n8 C tiles
 * (j = 2kk, 2kk + 1) are one k16 A fragment: a0..a3 = c0..c3 of tile 2kk, a4..a7 = c0..c3 of tile
 * 2kk + 1, so with these encodings the thread-buffer index is unchanged (element d of C is element
 * d of A). Returns the A encoding; throws `BlockGemmPolicyError` when warps split N (a row's K would
 * be spread over warps). Postcondition (property-tested cell by cell): for every thread and d,
 * X_C(d) = X_A(d).
 */
export function mmaSyncCToAEncoding(
  tiling: MmaSyncWarpTiling & { readonly tileM: number; readonly tileN: number },
): TileDistributionEncoding {
  if (tiling.warps[1] !== 1)
    throw new BlockGemmPolicyError(
      'mmaSyncCToAEncoding warps[1]',
      'must be 1: each warp needs whole rows of C to use them as K of A',
      String(tiling.warps[1]),
    );
  return mmaSyncARegisterEncoding({ dtype: tiling.dtype, warps: tiling.warps, tileM: tiling.tileM, tileK: tiling.tileN });
}

/**
 * Emits the C → A conversion for the calling thread: `out[d] = (dtype) acc[d]` (round to nearest),
 * `acc` fp32 in {@link mmaSyncCEncoding}, `out` of the 16-bit input type in the encoding
 * {@link mmaSyncCToAEncoding} gives for the same tiling (checked: no data moves between threads).
 */
export function emitCToAFragment(
  t: ThreadScope,
  acc: DistributedTensor,
  out: DistributedTensor,
  tiling: MmaSyncWarpTiling & { readonly tileM: number; readonly tileN: number },
): void {
  const c = mmaSyncCEncoding(tiling);
  const a = mmaSyncCToAEncoding(tiling);
  if (!acc.encoding.equals(c))
    throw new BlockGemmPolicyError(
      'emitCToAFragment acc',
      'must have the mma.sync block C distribution of the tiling',
      String(acc.encoding),
    );
  if (!out.encoding.equals(a))
    throw new BlockGemmPolicyError('emitCToAFragment out', 'must have the A-fragment distribution of the tiling', String(out.encoding));
  for (let d = 0; d < acc.size; d++) t.b.assign(out.at(t, d), cast(acc.at(t, d), out.type));
}
