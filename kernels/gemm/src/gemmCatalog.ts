// The instance catalog: every GEMM kernel this operator ships, as data. CI compiles each of them for
// sm_90a (gemmCatalog.compile.spec.ts) and fails on errors, register spills or a stack frame.
import { TilekitError } from '@tilekit/numeric';
import type { GemmEpilogue } from '@tilekit/gemm';
import { GemmInstance } from './gemmInstance.ts';
import { GEMM_DTYPES, type GemmLayoutName } from './gemmProblem.ts';

/**
 * Block tiles: 128×N with two consumer warpgroups (64 rows each, wgmma m64nNk16), K tiles of 64
 * (one 128-byte swizzle row), 4 shared-memory stages; 128×256 is the large-problem tile (128 fp32
 * accumulators per consumer thread), 128×128 the one for problems with fewer than 132 large tiles.
 */
export const GEMM_TILES = Object.freeze([
  { tileM: 128, tileN: 256, tileK: 64, stages: 4 },
  { tileM: 128, tileN: 128, tileK: 64, stages: 4 },
]);

/** Register budgets after setmaxnreg: 40 for the producer warpgroup, 232 for each of the two consumers (40·128 + 232·256 ≤ 64K). */
export const GEMM_REGISTER_SPLIT = Object.freeze({ producerRegisters: 40, consumerRegisters: 232 });

/** M tiles per rasterization group. */
export const GEMM_GROUP_M = 8;

/**
 * The few epilogue-functor instances (C = act(alpha·(A·B) + bias[n])): 128×256 tiles with the
 * 2-element C store, kept to three so the CI compile stays short; more are one line each.
 */
export const GEMM_EPILOGUE_INSTANCES: readonly { readonly dtype: 'fp16' | 'bf16'; readonly epilogue: GemmEpilogue }[] = Object.freeze([
  { dtype: 'fp16', epilogue: { bias: true, activation: 'relu' } },
  { dtype: 'fp16', epilogue: { bias: true, activation: 'gelu_tanh' } },
  { dtype: 'bf16', epilogue: { bias: true, activation: 'silu' } },
]);

/**
 * The layouts with an M- or N-major operand (wgmma's transpose bit): each gets both tiles with the
 * 2-element C store only (n and ldc even), which keeps the CI compile at 12 more instances.
 */
export const GEMM_TRANSPOSED_LAYOUTS: readonly GemmLayoutName[] = Object.freeze(['nn', 'nt', 'tt'] as const);

function buildCatalog(): GemmInstance[] {
  const out: GemmInstance[] = [];
  for (const dtype of GEMM_DTYPES) {
    for (const tile of GEMM_TILES) {
      for (const cVector of [2, 1] as const) {
        out.push(new GemmInstance({ dtype, layout: 'tn', ...tile, ...GEMM_REGISTER_SPLIT, groupM: GEMM_GROUP_M, cVector }));
      }
    }
  }
  for (const { dtype, epilogue } of GEMM_EPILOGUE_INSTANCES) {
    out.push(
      new GemmInstance({ dtype, layout: 'tn', ...GEMM_TILES[0]!, ...GEMM_REGISTER_SPLIT, groupM: GEMM_GROUP_M, cVector: 2, epilogue }),
    );
  }
  for (const dtype of GEMM_DTYPES) {
    out.push(
      new GemmInstance({
        dtype,
        layout: 'tn',
        ...GEMM_TILES[0]!,
        ...GEMM_REGISTER_SPLIT,
        groupM: GEMM_GROUP_M,
        cVector: 2,
        persistent: true,
      }),
    );
  }
  for (const layout of GEMM_TRANSPOSED_LAYOUTS) {
    for (const dtype of GEMM_DTYPES) {
      for (const tile of GEMM_TILES)
        out.push(new GemmInstance({ dtype, layout, ...tile, ...GEMM_REGISTER_SPLIT, groupM: GEMM_GROUP_M, cVector: 2 }));
    }
  }
  return out;
}

/** Two instances with the same name or hash: the catalog is inconsistent. */
export class GemmCatalogError extends TilekitError {
  constructor(message: string) {
    super('gemm/catalog', message);
  }
}

/** Throws `GemmCatalogError` unless names and hashes are unique. */
export function checkGemmCatalog(catalog: readonly GemmInstance[]): void {
  const names = new Set<string>();
  const hashes = new Set<string>();
  for (const i of catalog) {
    if (names.has(i.name)) throw new GemmCatalogError(`two instances are named ${i.name}`);
    if (hashes.has(i.key.hash)) throw new GemmCatalogError(`two instances share the hash ${i.key.hash} (${i.name})`);
    names.add(i.name);
    hashes.add(i.key.hash);
  }
}

/**
 * Every instance (sm_90a): fp16 and bf16 × `tn` layout × {128×256, 128×128} tiles × {2-element,
 * scalar} C stores (identity epilogue), then the {@link GEMM_EPILOGUE_INSTANCES}, then the two
 * persistent-scheduler instances (fp16 and bf16 `tn` 128×256, 2-element C stores; dispatch ranks
 * them after their one-block-per-tile twins, so they run by name), then
 * {@link GEMM_TRANSPOSED_LAYOUTS} × fp16/bf16 × both tiles with 2-element C stores. Postcondition
 * (tested): names and hashes are unique.
 */
export const GEMM_CATALOG: readonly GemmInstance[] = Object.freeze(buildCatalog());
checkGemmCatalog(GEMM_CATALOG);

/** The instance of the catalog named `name`, or undefined. */
export function findGemmInstance(name: string, catalog: readonly GemmInstance[] = GEMM_CATALOG): GemmInstance | undefined {
  return catalog.find((i) => i.name === name);
}
