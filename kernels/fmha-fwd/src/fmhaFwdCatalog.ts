// The instance catalog: every attention-forward kernel this operator ships, as data. CI compiles
// each for sm_90a (fmhaFwdCatalog.compile.spec.ts) and fails on errors, spills or a stack frame.
import {
  FMHA_FWD_DTYPES,
  FMHA_FWD_REGISTER_SPLIT,
  FMHA_FWD_SOFTMAX_OVERLAP_SCHEDULE,
  FMHA_FWD_STAGES,
  FmhaFwdCatalogError,
  type FmhaFwdMaskKind,
} from '@tilekit/fmha';
import { FmhaFwdInstance } from '@tilekit/fmha-launch';

/** Head-dim configurations (d_qk, d_v) with their block tiles: tileM query rows (64 per consumer warpgroup) × tileN key rows. */
export const FMHA_FWD_TILES = Object.freeze([
  { headDim: 32, headDimV: 32, tileM: 128, tileN: 128 },
  // d 64 and 128 overlap each tile's softmax with the previous tile's P·V (measured 1.02–1.06× at s8192;
  // d 256 measured 0.97×, so the others stay one tile at a time until measured).
  { headDim: 64, headDimV: 64, tileM: 128, tileN: 128, schedule: FMHA_FWD_SOFTMAX_OVERLAP_SCHEDULE },
  { headDim: 96, headDimV: 96, tileM: 128, tileN: 128 },
  { headDim: 128, headDimV: 128, tileM: 128, tileN: 128, schedule: FMHA_FWD_SOFTMAX_OVERLAP_SCHEDULE },
  // d 192 / d_v 128 (DeepSeek's shape): 96 key rows keep Q, two K and two V stages in 168 KiB.
  { headDim: 192, headDimV: 128, tileM: 128, tileN: 96 },
  // d 256: 64 key rows; the 64×256 O accumulator is 128 fp32 registers per consumer thread.
  { headDim: 256, headDimV: 256, tileM: 128, tileN: 64 },
]);

export const FMHA_FWD_MASKS: readonly FmhaFwdMaskKind[] = ['none', 'window'];

function buildCatalog(): FmhaFwdInstance[] {
  const out: FmhaFwdInstance[] = [];
  for (const splitKv of [false, true]) {
    for (const dtype of FMHA_FWD_DTYPES) {
      for (const dims of FMHA_FWD_TILES) {
        for (const mask of FMHA_FWD_MASKS) {
          out.push(new FmhaFwdInstance({ dtype, ...dims, stages: FMHA_FWD_STAGES, ...FMHA_FWD_REGISTER_SPLIT, mask, splitKv }));
        }
      }
    }
  }
  return out;
}

/** Throws `FmhaFwdCatalogError` unless names and hashes are unique. */
export function checkFmhaFwdCatalog(catalog: readonly FmhaFwdInstance[]): void {
  const names = new Set<string>();
  const hashes = new Set<string>();
  for (const i of catalog) {
    if (names.has(i.name)) throw new FmhaFwdCatalogError(`two instances are named ${i.name}`);
    if (hashes.has(i.key.hash)) throw new FmhaFwdCatalogError(`two instances share the hash ${i.key.hash} (${i.name})`);
    names.add(i.name);
    hashes.add(i.key.hash);
  }
}

/**
 * Every instance (sm_90a): {one pass, split-KV} × {fp16, bf16} × the head dims of
 * {@link FMHA_FWD_TILES} × {no mask, window mask}. Batch/group mode, GQA, layouts (strides) and
 * LSE are runtime arguments of every instance. Postcondition (tested): names and hashes are unique.
 */
export const FMHA_FWD_CATALOG: readonly FmhaFwdInstance[] = Object.freeze(buildCatalog());
checkFmhaFwdCatalog(FMHA_FWD_CATALOG);

/** The instance named `name`, or undefined. */
export function findFmhaFwdInstance(name: string, catalog: readonly FmhaFwdInstance[] = FMHA_FWD_CATALOG): FmhaFwdInstance | undefined {
  return catalog.find((i) => i.name === name);
}
