// The backward cases of the ffpa benchmark suite (issue 19): large-head-dim attention backward
// (FfpaBwdRunner: dot_do_o, dq_dk_dv with S and dP recomputed per column slice, convert_dq) against
// PyTorch SDPA's memory-efficient backward, the only torch backend that runs these head dims. B=1
// H=32 N=8192 bf16 at d 320, 512, 768 and 1024, on the sm_90a path (the warp-specialized TMA
// dq_dk_dv, clusters exchanging partial scores) and on the sm_80 path (mma.sync, built for sm_90a); inputs, reference and judging
// are attention_bwd's (REFERENCE_OPS.md), as in the fmha-bwd suite whose case helpers these reuse.
import type { FfpaBwdPath } from '@tilekit/kernel-ffpa';
import { caseSeed } from './caseSeed.ts';
import { fmhaBwdBenchCase, type FmhaBwdBenchCase, type FmhaBwdBenchShape } from './fmhaBwdCases.ts';

const shape = (d: number): FmhaBwdBenchShape => ({ dtype: 'bf16', b: 1, h: 32, d, causal: false, deterministic: false, s: 8192 });

/** The backward shapes (the sm_80 path's cases). */
export const FFPA_BWD_BENCH_SHAPES: readonly FmhaBwdBenchShape[] = Object.freeze([320, 512, 768, 1024].map(shape));

/** The shapes of the sm_90a path's cases: the same four. */
export const FFPA_BWD_SM90_BENCH_SHAPES: readonly FmhaBwdBenchShape[] = FFPA_BWD_BENCH_SHAPES;

/**
 * The case of a shape on a path: `ffpa_bwd_…` (the fmha-bwd name with the suite's prefix; `_sm80`
 * names the sm_80 path, as the forward cases do), seeded by the name without the path (both paths
 * of a shape run on the same inputs), with the suite's record params (`dv`, `hk`, `pass` bwd,
 * `path`: which dq_dk_dv pipeline runs) and torch-efficient judging dQ, dK and dV.
 */
export function ffpaBwdBenchCase(s: FmhaBwdBenchShape, path: FfpaBwdPath = 'sm90'): FmhaBwdBenchCase {
  const base = fmhaBwdBenchCase(s);
  const shared = base.name.replace(/^fmha_bwd_/, 'ffpa_bwd_');
  const name = `${shared}${path === 'sm80' ? '_sm80' : ''}`;
  return {
    ...base,
    name,
    seed: caseSeed(shared),
    params: { ...base.params, dv: s.d, hk: s.h, pass: 'bwd', path, plan: 'auto' },
    errorBaselines: ['torch-efficient'],
  };
}

/** Every backward case of the suite, in order: the sm_90a path's, then the sm_80 path's. */
export const FFPA_BWD_BENCH_CASES: readonly FmhaBwdBenchCase[] = Object.freeze([
  ...FFPA_BWD_SM90_BENCH_SHAPES.map((s) => ffpaBwdBenchCase(s, 'sm90')),
  ...FFPA_BWD_BENCH_SHAPES.map((s) => ffpaBwdBenchCase(s, 'sm80')),
]);
