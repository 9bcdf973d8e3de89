// The sm_80 instance catalog: cp.async + ldmatrix + mma.sync attention-forward kernels, as data. CI
// compiles each for sm_80 and sm_90a (fmhaFwdSm80Catalog.compile.spec.ts), failing on spills.
import { duplicateInstance, sm80, sm90a, type Target } from '@tilekit/codegen';
import { FmhaFwdCatalogError, FMHA_FWD_DTYPES } from '@tilekit/fmha';
import { FMHA_FWD_MASKS } from '../fmhaFwdCatalog.ts';
import { FmhaFwdSm80Instance, type FmhaFwdSm80InstancePolicy } from './fmhaFwdSm80Instance.ts';

/**
 * Head dims with their block tiles: 128 query rows (8 warps of 16) × tileN key rows, Q resident in
 * registers (d 128: 32 registers next to the 64 of O; ptxas reports about 210 in all, no spills).
 * d 64 takes 128-key tiles (fewer barriers per key; S is 64 registers), d 128 64-key tiles (97 KiB
 * of shared memory: Q 32 KiB + 2 × 16 KiB K + 2 × 16 KiB V).
 */
export const FMHA_FWD_SM80_TILES = Object.freeze([
  { headDim: 64, headDimV: 64, tileM: 128, tileN: 128, qResidence: 'registers' },
  { headDim: 128, headDimV: 128, tileM: 128, tileN: 64, qResidence: 'registers' },
] as const);

/** The catalog's policies: {fp16, bf16} × {@link FMHA_FWD_SM80_TILES} × {no mask, window mask}. */
export const FMHA_FWD_SM80_POLICIES: readonly FmhaFwdSm80InstancePolicy[] = Object.freeze(
  FMHA_FWD_DTYPES.flatMap((dtype) =>
    FMHA_FWD_SM80_TILES.flatMap((tile) => FMHA_FWD_MASKS.map((mask): FmhaFwdSm80InstancePolicy => ({ dtype, ...tile, mask }))),
  ),
);

/** Throws `FmhaFwdCatalogError` unless names and hashes are unique. */
export function checkFmhaFwdSm80Catalog(catalog: readonly FmhaFwdSm80Instance[]): void {
  const dup = duplicateInstance(catalog);
  if (dup) throw new FmhaFwdCatalogError(`two sm_80 instances share the ${dup.field} ${dup.value}`);
}

/**
 * Every sm_80 instance (target sm_80): {fp16, bf16} × d {64, 128} × {no mask, window mask}. Batch /
 * group mode, GQA, layouts (strides) and LSE are runtime arguments. Postcondition (tested): names
 * and hashes are unique, also together with {@link FMHA_FWD_SM80_CATALOG_SM90A}.
 */
export const FMHA_FWD_SM80_CATALOG: readonly FmhaFwdSm80Instance[] = Object.freeze(
  FMHA_FWD_SM80_POLICIES.map((p) => new FmhaFwdSm80Instance(p)),
);

/** The catalog rebuilt for sm_90a (Hopper runs the sm_80 kernels only when they are compiled for it): names end `_sm_90a`. */
export const FMHA_FWD_SM80_CATALOG_SM90A: readonly FmhaFwdSm80Instance[] = Object.freeze(
  FMHA_FWD_SM80_POLICIES.map((p) => new FmhaFwdSm80Instance(p, sm90a)),
);
checkFmhaFwdSm80Catalog([...FMHA_FWD_SM80_CATALOG, ...FMHA_FWD_SM80_CATALOG_SM90A]);

/** The sm_80 catalog built for `target` (sm_80 or sm_90a). Throws `FmhaFwdCatalogError` for another target. */
export function fmhaFwdSm80CatalogFor(target: Target): readonly FmhaFwdSm80Instance[] {
  if (target === sm80) return FMHA_FWD_SM80_CATALOG;
  if (target === sm90a) return FMHA_FWD_SM80_CATALOG_SM90A;
  throw new FmhaFwdCatalogError(`the sm_80 attention kernels are built for sm_80 or sm_90a, not ${target.name}`);
}
