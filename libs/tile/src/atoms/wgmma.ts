import type { DTypeName } from '@tilekit/numeric';
import { AtomError } from '../errors.ts';
import { hRef, TileDistributionEncoding, type RhRef } from '../tileDistributionEncoding.ts';
import { FragmentAtom } from './fragmentAtom.ts';

/** Arguments of {@link wgmmaAccumulatorAtom}. */
export interface WgmmaAccumulatorSpec {
  /** The instruction's N: a multiple of 8 in [8, 256]. */
  readonly n: number;
  /** Accumulator type: fp32 (N/2 registers) or fp16 (N/4 `.f16x2` registers); default fp32. */
  readonly dtype?: DTypeName;
}

/**
 * The accumulator D of `wgmma.mma_async.sync.aligned.m64nNk16` (fp16/bf16 inputs) for one warpgroup
 * of 128 threads (4 warps): PTX ISA 9.7.15.5.1.1.1, Figure 149, the layout CUTLASS writes as
 * `CLayout_64xN`. Each warp w owns rows 16w..16w+15 and, within them, repeats the mma.sync m16n8 C
 * fragment N/8 times along N: element i of lane l (g = l / 4, t = l % 4) sits at
 * row 16w + g + 8·⌊i/2⌋ mod 2, col 8·⌊i/4⌋ + 2t + i mod 2.
 *
 * Encoding: H_M = (4, 2, 8), H_N = (N/8, 4, 2) (the N/8 digit left out for N = 8); P0 (warp) → H_M[0],
 * P1 (lane) → (H_M[2], the 4-digit of H_N); Y = (the N/8 digit, H_M[1], the 2-digit of H_N), so the
 * thread-buffer index is the PTX element index i = 4·nBlock + 2·mHalf + pair.
 */
export function wgmmaAccumulatorAtom(spec: WgmmaAccumulatorSpec): FragmentAtom {
  const n = spec.n;
  if (!Number.isSafeInteger(n) || n < 8 || n > 256 || n % 8 !== 0) throw new AtomError('wgmmaAccumulatorAtom', 'n must be a multiple of 8 in [8, 256]', String(n));
  const dtype = spec.dtype ?? 'fp32';
  if (dtype !== 'fp32' && dtype !== 'fp16') throw new AtomError('wgmmaAccumulatorAtom', 'the accumulator dtype must be fp32 or fp16', dtype);
  const blocks = n / 8;
  const off = blocks > 1 ? 1 : 0;
  const hs = [
    [4, 2, 8],
    [...(blocks > 1 ? [blocks] : []), 4, 2],
  ];
  const ys: RhRef[] = [...(blocks > 1 ? [hRef(1, 0)] : []), hRef(0, 1), hRef(1, off + 1)];
  const encoding = new TileDistributionEncoding({ hs, ps: [[hRef(0, 0)], [hRef(0, 2), hRef(1, off)]], ys });
  const acc = dtype === 'fp32' ? 'f32' : 'f16';
  return new FragmentAtom({
    name: `wgmma.m64n${n}k16.${acc}.D`,
    instruction: `wgmma.mma_async.sync.aligned.m64n${n}k16.${acc}.f16.f16`,
    target: 'sm_90a',
    operand: 'C',
    dtype,
    xNames: ['m', 'n'],
    encoding,
    reference: 'PTX ISA 9.7.15.5.1.1.1 "Matrix Fragments for wgmma.mma_async.m64nNk16" (accumulator D, Figure 149); CUTLASS CLayout_64xN',
  });
}
