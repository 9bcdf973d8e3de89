// The sm_80 instance catalog: cp.async multistage + ldmatrix + mma.sync GEMM kernels, as data. CI
// compiles each for sm_80 and sm_90a (gemmSm80Catalog.compile.spec.ts), failing on spills.
import { duplicateInstance, sm80, sm90a, type Target } from '@tilekit/codegen';
import { GEMM_DTYPES } from '../gemmProblem.ts';
import { GemmCatalogError } from '../gemmCatalog.ts';
import { GemmSm80Instance, type GemmSm80Policy } from './gemmSm80Instance.ts';

/** 128×128×32 block tiles, 4 cp.async stages, 8 warps as 2 (M) × 4 (N): warp tiles 64×32 (64 fp32 accumulators per thread). */
export const GEMM_SM80_TILE = Object.freeze({ tileM: 128, tileN: 128, tileK: 32, stages: 4, warps: [2, 4] as const, groupM: 8 });

/** The layouts of the catalog: `tn` (both operands K-major) and `nn` (A M-major: ldmatrix .trans). */
export const GEMM_SM80_LAYOUTS = Object.freeze(['tn', 'nn'] as const);

/** The catalog's policies (fp16 and bf16 × {@link GEMM_SM80_LAYOUTS}, scalar C stores: any N). */
export const GEMM_SM80_POLICIES: readonly GemmSm80Policy[] = Object.freeze(
  GEMM_DTYPES.flatMap((dtype) => GEMM_SM80_LAYOUTS.map((layout): GemmSm80Policy => ({ dtype, layout, ...GEMM_SM80_TILE, cVector: 1 }))),
);

/** Every sm_80 instance (target sm_80). Postcondition (tested): names and hashes unique. */
export const GEMM_SM80_CATALOG: readonly GemmSm80Instance[] = Object.freeze(GEMM_SM80_POLICIES.map((p) => new GemmSm80Instance(p)));

/** Throws `GemmCatalogError` unless names and hashes are unique. */
export function checkGemmSm80Catalog(catalog: readonly GemmSm80Instance[]): void {
  const dup = duplicateInstance(catalog);
  if (dup) throw new GemmCatalogError(`two sm_80 instances share the ${dup.field} ${dup.value}`);
}
checkGemmSm80Catalog(GEMM_SM80_CATALOG);

/** The catalog rebuilt for sm_90a (Hopper runs the sm_80 kernels only when they are compiled for it): names end `_sm_90a`. */
export const GEMM_SM80_CATALOG_SM90A: readonly GemmSm80Instance[] = Object.freeze(
  GEMM_SM80_POLICIES.map((p) => new GemmSm80Instance(p, sm90a)),
);
checkGemmSm80Catalog([...GEMM_SM80_CATALOG, ...GEMM_SM80_CATALOG_SM90A]);

/** The sm_80 catalog built for `target` (sm_80 or sm_90a): {@link GEMM_SM80_CATALOG} or {@link GEMM_SM80_CATALOG_SM90A}. */
export function gemmSm80CatalogFor(target: Target): readonly GemmSm80Instance[] {
  if (target === sm80) return GEMM_SM80_CATALOG;
  if (target === sm90a) return GEMM_SM80_CATALOG_SM90A;
  throw new GemmCatalogError(`the sm_80 GEMM kernels are built for sm_80 or sm_90a, not ${target.name}`);
}

/** The sm_80-family instance named `name` in either build (`…_sm_80` or `…_sm_90a`), or undefined. */
export function findGemmSm80Instance(name: string): GemmSm80Instance | undefined {
  return GEMM_SM80_CATALOG.find((i) => i.name === name) ?? GEMM_SM80_CATALOG_SM90A.find((i) => i.name === name);
}
