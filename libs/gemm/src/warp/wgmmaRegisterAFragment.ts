import type { DTypeName } from '@tilekit/numeric';
import { embedEncoding, FragmentAtom, makeWarpGridEncoding, mmaSyncAtoms } from '@tilekit/tile';
import { ptxInputType } from './ptxInputType.ts';

/**
 * The register fragment of A for `wgmma.mma_async.m64nNk16` with A in registers (PTX ISA
 * 9.7.15.5.1.1.1, Figure 148; CUTLASS `ALayout_64x16`): warp w of the warpgroup holds rows
 * 16w..16w+15 exactly as one warp holds the `mma.sync.m16n8k16` A fragment, so the encoding is a
 * 4-warp grid along M (tile's `makeWarpGridEncoding`) embedded with tile's mma.sync A encoding
 * (P = [warp, lane]; element i of lane l: row 16w + l/4 + 8·((i/2) mod 2), col 2·(l mod 4) + i mod 2 + 8·(i/4)).
 */
export function wgmmaRegisterAFragment(dtype: DTypeName): FragmentAtom {
  const t = ptxInputType('wgmma m64nNk16 A', dtype);
  const warp = mmaSyncAtoms('m16n8k16', dtype).a;
  const encoding = embedEncoding(makeWarpGridEncoding({ warps: [4], xs: [{ warpAxis: 0 }, {}] }), warp.encoding);
  return new FragmentAtom({
    name: `wgmma.m64nNk16.${t}.A`,
    instruction: `wgmma.mma_async.sync.aligned.m64nNk16.f32.${t}.${t}`,
    target: 'sm_90a',
    operand: 'A',
    dtype,
    xNames: ['m', 'k'],
    encoding,
    reference:
      'PTX ISA 9.7.15.5.1.1.1 "Matrix Fragments for wgmma.mma_async.m64nNk16" (multiplicand A in registers, Figure 148); CUTLASS ALayout_64x16',
  });
}
