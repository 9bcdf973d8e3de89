// The sparse attention instance catalog, as data. CI compiles each for sm_90a
// (spargeFwdCatalog.compile.spec.ts) and fails on errors, spills or a stack frame.
import { FMHA_FWD_REGISTER_SPLIT, FMHA_FWD_STAGES, FmhaFwdCatalogError, FmhaFwdInt8QkOperand, FmhaFwdPvSkipGate } from '@tilekit/fmha';
import { SPARGE_HEAD_DIMS } from '../spargeShape.ts';
import { SPARGE_PIPELINES, SpargeFwdInstance } from './spargeFwdInstance.ts';

/**
 * The block tile of every instance: 128 query rows (two consumer warpgroups) × 128 key rows, the
 * dense forward's d64/d128 tile, so a Sparge block map for these kernels has blockQ = blockK = 128.
 */
export const SPARGE_FWD_TILE = Object.freeze({ tileM: 128, tileN: 128 });

function buildCatalog(): SpargeFwdInstance[] {
  const pvGate = new FmhaFwdPvSkipGate();
  const qkOperand = new FmhaFwdInt8QkOperand();
  const out: SpargeFwdInstance[] = [];
  for (const pipeline of SPARGE_PIPELINES) {
    for (const dtype of ['fp16', 'bf16'] as const) {
      for (const headDim of SPARGE_HEAD_DIMS) {
        for (const mask of ['none', 'window'] as const) {
          for (const pvSkip of [false, true]) {
            for (const int8 of [false, true]) {
              out.push(
                new SpargeFwdInstance({
                  dtype,
                  headDim,
                  headDimV: headDim,
                  ...SPARGE_FWD_TILE,
                  stages: FMHA_FWD_STAGES,
                  ...FMHA_FWD_REGISTER_SPLIT,
                  mask,
                  pipeline,
                  ...(pvSkip ? { pvGate } : {}),
                  ...(int8 ? { qkOperand } : {}),
                }),
              );
            }
          }
        }
      }
    }
  }
  const names = new Set(out.map((i) => i.name));
  if (names.size !== out.length) throw new FmhaFwdCatalogError('two sparse attention instances share a name');
  return out;
}

/**
 * Every sparse attention instance (sm_90a): {vsa, jenga} × {fp16, bf16} × d {64, 128} × {no mask,
 * causal} × {without, with the PV-skip vote} × {Q·Kᵀ in the dtype, int8 Q·Kᵀ}. The vote's mode (warp, block) and thresholds,
 * batch/group mode, GQA and LSE are runtime arguments; pvMode none runs the instance without the vote.
 * Postcondition (tested): names are unique.
 */
export const SPARGE_FWD_CATALOG: readonly SpargeFwdInstance[] = Object.freeze(buildCatalog());
