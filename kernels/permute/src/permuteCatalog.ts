// The instance catalog: every kernel this operator ships, as data. CI compiles each of them for
// sm_90a (permuteCatalog.compile.spec.ts) and fails on errors or register spills.
import { TilekitError } from '@tilekit/numeric';
import { getDType } from '@tilekit/numeric';
import { HeadPermuteInstance, TransposeInstance, type PermuteInstance } from './permuteInstance.ts';
import { PERMUTE_DTYPES, type PermuteDType } from './permuteProblem.ts';
import type { VectorBytes } from './vectorAccess.ts';

/** Vector widths per dtype: 16 bytes (the fast path) down to one element. */
function vectorWidths(dtype: PermuteDType): VectorBytes[] {
  const e = getDType(dtype).bytes;
  return ([16, 8, 4, 2] as const).filter((v) => v >= e);
}

/**
 * Head-permute tiles: threads × vectors per thread × rows. A block moves 1024 vectors (16 KiB with
 * 16-byte vectors) whatever the plane width, so small planes get several rows per block.
 */
export const HEAD_PERMUTE_TILES = Object.freeze([
  { threads: 256, unroll: 4, rows: 1 },
  { threads: 256, unroll: 2, rows: 2 },
  { threads: 256, unroll: 1, rows: 4 },
  { threads: 128, unroll: 1, rows: 8 },
]);

/** Rows (m) of the 16-byte transpose tiles (64 columns wide; 256 rows only for 2-byte types). */
export const TRANSPOSE_TILE_ROWS = Object.freeze([64, 128, 256] as const);

function buildCatalog(): PermuteInstance[] {
  const out: PermuteInstance[] = [];
  for (const dtype of PERMUTE_DTYPES) {
    for (const vectorBytes of vectorWidths(dtype)) {
      for (const tile of HEAD_PERMUTE_TILES) out.push(new HeadPermuteInstance({ dtype, vectorBytes, ...tile }));
    }
  }
  for (const dtype of PERMUTE_DTYPES) {
    const e = getDType(dtype).bytes as VectorBytes;
    for (const indexDomain of ['i32', 'i64'] as const) {
      // 16-byte vectors with 8-vector store runs (one 128-byte segment); tiles 64, 128 or 256 rows
      // tall (each block writes 128, 256 or 512 contiguous bytes of every output row it touches).
      for (const tileM of TRANSPOSE_TILE_ROWS) {
        if (tileM * 64 * e > 32 * 1024) continue; // at most 32 KiB of shared memory per block
        out.push(new TransposeInstance({ dtype, vectorBytes: 16, tileM, tileN: 64, threads: 256, storeRun: 8, indexDomain }));
      }
      // Scalars with 32-element store runs, for sizes that are not multiples of a vector.
      out.push(new TransposeInstance({ dtype, vectorBytes: e, tileM: 64, tileN: 64, threads: 256, storeRun: 32, indexDomain }));
    }
  }
  return out;
}

/** Two instances with the same name or hash: the catalog is inconsistent. */
export class CatalogError extends TilekitError {
  constructor(message: string) {
    super('permute/catalog', message);
  }
}

/** Throws `CatalogError` unless names and hashes are unique. */
export function checkCatalog(catalog: readonly PermuteInstance[]): void {
  const names = new Set<string>();
  const hashes = new Set<string>();
  for (const i of catalog) {
    if (names.has(i.name)) throw new CatalogError(`two instances are named ${i.name}`);
    if (hashes.has(i.key.hash)) throw new CatalogError(`two instances share the hash ${i.key.hash} (${i.name})`);
    names.add(i.name);
    hashes.add(i.key.hash);
  }
}

/**
 * Every instance of the operator (sm_90a): head permutes for fp16/bf16/fp32 × vector widths × 4
 * tiles, transposes for fp16/bf16/fp32 × {i32, i64} index domains × {16-byte vectors in 64/128/256-row
 * tiles, scalars}.
 * Postcondition (tested): names and hashes are unique.
 */
export const PERMUTE_CATALOG: readonly PermuteInstance[] = Object.freeze(buildCatalog());
checkCatalog(PERMUTE_CATALOG);

/** The instance of the catalog named `name`, or undefined. */
export function findPermuteInstance(name: string, catalog: readonly PermuteInstance[] = PERMUTE_CATALOG): PermuteInstance | undefined {
  return catalog.find((i) => i.name === name);
}
