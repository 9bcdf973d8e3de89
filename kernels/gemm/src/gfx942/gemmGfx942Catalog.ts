// The gfx942 instance catalog: every MI300 GEMM kernel this operator emits, as data. CI compiles each
// with clang-19 for gfx942 (gemmGfx942Catalog.compile.spec.ts) and fails on errors, spills or scratch.
import { TilekitError } from '@tilekit/numeric';
import { GEMM_DTYPES } from '../gemmProblem.ts';
import { GemmGfx942Instance } from './gemmGfx942Instance.ts';

/**
 * Block tiles of the gfx942 catalog: 256 threads as 2×2 wave64s, K tiles of 32 (64-byte LDS rows).
 * 256×128: each wave 128×64 = 4×2 MFMA 32×32 tiles (128 fp32 accumulators per lane); 128×128: 2×2
 * tiles (64 accumulators), for problems with few large tiles.
 */
export const GEMM_GFX942_TILES = Object.freeze([
  { tileM: 256, tileN: 128, tileK: 32, warpsM: 2, warpsN: 2 },
  { tileM: 128, tileN: 128, tileK: 32, warpsM: 2, warpsN: 2 },
]);

/** The tile of the scalar-access ("any shape") instances: each wave 64×32 (2×1 MFMA tiles). */
export const GEMM_GFX942_ANY_SHAPE_TILE = Object.freeze({ tileM: 128, tileN: 64, tileK: 32, warpsM: 2, warpsN: 2 });

/** Two instances with the same name or hash: the catalog is inconsistent. */
export class GemmGfx942CatalogError extends TilekitError {
  constructor(message: string) {
    super('gemm/gfx942-catalog', message);
  }
}

/** Throws `GemmGfx942CatalogError` unless names and hashes are unique. */
export function checkGemmGfx942Catalog(catalog: readonly GemmGfx942Instance[]): void {
  const names = new Set<string>();
  const hashes = new Set<string>();
  for (const i of catalog) {
    if (names.has(i.name)) throw new GemmGfx942CatalogError(`two instances are named ${i.name}`);
    if (hashes.has(i.key.hash)) throw new GemmGfx942CatalogError(`two instances share the hash ${i.key.hash} (${i.name})`);
    names.add(i.name);
    hashes.add(i.key.hash);
  }
}

function buildCatalog(): GemmGfx942Instance[] {
  const out: GemmGfx942Instance[] = [];
  for (const dtype of GEMM_DTYPES) {
    for (const tile of GEMM_GFX942_TILES) out.push(new GemmGfx942Instance({ dtype, layout: 'tn', ...tile, abVector: 8, cVector: 4 }));
    // Any shape (ragged K, odd strides): scalar global loads and stores on a 128×64 tile (with
    // 128×128, the per-element predicates' exec masks spill SGPRs).
    out.push(new GemmGfx942Instance({ dtype, layout: 'tn', ...GEMM_GFX942_ANY_SHAPE_TILE, abVector: 1, cVector: 1 }));
  }
  return out;
}

/**
 * Every gfx942 instance: fp16 and bf16 × TN × {256×128×32, 128×128×32} with 16-byte A/B loads and
 * 4-element C stores, plus a 128×64×32 instance per dtype with scalar accesses (any shape).
 * Postcondition (tested): names and hashes are unique.
 */
export const GEMM_GFX942_CATALOG: readonly GemmGfx942Instance[] = Object.freeze(buildCatalog());
checkGemmGfx942Catalog(GEMM_GFX942_CATALOG);
