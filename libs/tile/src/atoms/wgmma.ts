import type { DTypeName } from '@tilekit/numeric';
import { AtomError } from '../errors.ts';
import { hRef, TileDistributionEncoding, type RhRef } from '../tileDistributionEncoding.ts';
import { FragmentAtom } from './fragmentAtom.ts';

/** Arguments of {@link wgmmaAccumulatorAtom}. */
export interface WgmmaAccumulatorSpec {
  /** The instruction's N: a multiple of 8 in [8, 256]. */
  readonly n: number;
  /**
   * Accumulator type: fp32 (N/2 registers) or fp16 (N/4 `.f16x2` registers) of the m64nNk16
   * float forms; int32: the `.s32` D (N/2 registers) of the integer form m64nNk32 (`.s8`/`.u8`
   * inputs), whose N is 8, 16, 24 or a multiple of 16 up to 256. Default fp32.
   */
  readonly dtype?: DTypeName;
}

// The N values of the integer shapes m64nNk32.s32.{s8,u8}.{s8,u8} (PTX ISA 9.7.15.5.2, "Integer
// type" .shape list): 8, 16, 24, then every multiple of 16 from 32 to 256.
const wgmmaIntegerNs: readonly number[] = Object.freeze([8, 16, 24, ...Array.from({ length: 15 }, (_, i) => 32 + 16 * i)]);

/**
 * The accumulator D of `wgmma.mma_async.sync.aligned.m64nNk16` (fp16/bf16 inputs) for one warpgroup
 * of 128 threads (4 warps): PTX ISA 9.7.15.5.1.1.1, Figure 149, the layout CUTLASS writes as
 * `CLayout_64xN`. Each warp w owns rows 16w..16w+15 and, within them, repeats the mma.sync m16n8 C
 * fragment N/8 times along N: element i of lane l (g = l / 4, t = l % 4) sits at
 * row 16w + g + 8·⌊i/2⌋ mod 2, col 8·⌊i/4⌋ + 2t + i mod 2.
 *
 * Encoding: H_M = (4, 2, 8), H_N = (N/8, 4, 2) (the N/8 digit left out for N = 8); P0 (warp) → H_M[0],
 * P1 (lane) → (H_M[2], the 4-digit of H_N); Y = (the N/8 digit, H_M[1], the 2-digit of H_N), so the
 * thread-buffer index is the PTX element index i = 4·nBlock + 2·mHalf + pair. With dtype int32 it
 * is the `.s32` D of the integer form `m64nNk32` (s8/u8 inputs), which the ISA lays out the same way.
 */
export function wgmmaAccumulatorAtom(spec: WgmmaAccumulatorSpec): FragmentAtom {
  const n = spec.n;
  if (!Number.isSafeInteger(n) || n < 8 || n > 256 || n % 8 !== 0)
    throw new AtomError('wgmmaAccumulatorAtom', 'n must be a multiple of 8 in [8, 256]', String(n));
  const dtype = spec.dtype ?? 'fp32';
  if (dtype !== 'fp32' && dtype !== 'fp16' && dtype !== 'int32')
    throw new AtomError('wgmmaAccumulatorAtom', 'the accumulator dtype must be fp32, fp16 or int32', dtype);
  if (dtype === 'int32' && !wgmmaIntegerNs.includes(n))
    throw new AtomError('wgmmaAccumulatorAtom', `n of the integer shape m64nNk32 must be one of ${wgmmaIntegerNs.join(', ')}`, String(n));
  const blocks = n / 8;
  const off = blocks > 1 ? 1 : 0;
  const hs = [
    [4, 2, 8],
    [...(blocks > 1 ? [blocks] : []), 4, 2],
  ];
  const ys: RhRef[] = [...(blocks > 1 ? [hRef(1, 0)] : []), hRef(0, 1), hRef(1, off + 1)];
  const encoding = new TileDistributionEncoding({ hs, ps: [[hRef(0, 0)], [hRef(0, 2), hRef(1, off)]], ys });
  if (dtype === 'int32') {
    // PTX ISA 9.7.15.5.1.1.2 (m64nNk32, Figure "accumulator D"): the .s32 D of the integer form has
    // the very layout of the .f32 D of m64nNk16, one 32-bit register per element.
    return new FragmentAtom({
      name: `wgmma.m64n${n}k32.s32.D`,
      instruction: `wgmma.mma_async.sync.aligned.m64n${n}k32.s32.s8.s8`,
      target: 'sm_90a',
      operand: 'C',
      dtype,
      xNames: ['m', 'n'],
      encoding,
      reference:
        'PTX ISA 9.7.15.5.1.1.2 "Matrix Fragments for wgmma.mma_async.m64nNk32" (accumulator D of .s32, the layout of Figure 149); CUTLASS CLayout_64xN',
    });
  }
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
