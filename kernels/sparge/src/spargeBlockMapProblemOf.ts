import type { SpargeFwdLaunchProblem } from './attention/spargeFwdLauncher.ts';
import type { SpargeBlockMapProblem } from './blockMap/spargeBlockMapKernels.ts';
import type { ResolvedSpargeParams, SpargeParams } from './spargeHyperparameters.ts';

/**
 * The block-map problem of an attention problem (what SpargeRunner prepares its block-map kernels
 * with): its shape, Q/K strides and sequences, the hyperparameters with the kernels' blocks.
 */
export function spargeBlockMapProblemOf(
  p: SpargeFwdLaunchProblem,
  params: SpargeParams,
  resolved: ResolvedSpargeParams,
): SpargeBlockMapProblem {
  return {
    dtype: p.dtype,
    headDim: p.hdimQ,
    batch: p.batch,
    nhead: p.nheadQ,
    nheadK: p.nheadK,
    ...(p.mode === 'group' ? { seqstartQ: p.seqstartQ, seqstartK: p.seqstartK } : { seqlenQ: p.seqlenQ, seqlenK: p.seqlenK }),
    qStrides: p.qStrides,
    kStrides: p.kStrides,
    params: { ...params, blockQ: resolved.blockQ, blockK: resolved.blockK },
  };
}
