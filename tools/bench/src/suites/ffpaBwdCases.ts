// The backward cases of the ffpa benchmark suite (issue 19): large-head-dim attention backward
// (FfpaBwdRunner: dot_do_o, dq_dk_dv with S and dP recomputed per column slice, convert_dq) against
// PyTorch SDPA's memory-efficient backward, the only torch backend that runs these head dims. B=1
// H=32 N=8192 bf16 at d 320, 512, 768 and 1024; inputs, reference and judging are attention_bwd's
// (REFERENCE_OPS.md), as in the fmha-bwd suite whose case helpers these reuse.
import { caseSeed } from './caseSeed.ts';
import { fmhaBwdBenchCase, type FmhaBwdBenchCase, type FmhaBwdBenchShape } from './fmhaBwdCases.ts';

/** The backward shapes. */
export const FFPA_BWD_BENCH_SHAPES: readonly FmhaBwdBenchShape[] = Object.freeze(
  [320, 512, 768, 1024].map((d): FmhaBwdBenchShape => ({ dtype: 'bf16', b: 1, h: 32, d, causal: false, deterministic: false, s: 8192 })),
);

/**
 * The case of a shape: `ffpa_bwd_…` (the fmha-bwd name with the suite's prefix), seeded by its name,
 * with the suite's record params (`dv`, `hk`, `pass` bwd, `path` sm80: the backward's dq_dk_dv is the
 * mma.sync pipeline, built for sm_90a) and torch-efficient judging dQ, dK and dV.
 */
export function ffpaBwdBenchCase(s: FmhaBwdBenchShape): FmhaBwdBenchCase {
  const base = fmhaBwdBenchCase(s);
  const name = base.name.replace(/^fmha_bwd_/, 'ffpa_bwd_');
  return {
    ...base,
    name,
    seed: caseSeed(name),
    params: { ...base.params, dv: s.d, hk: s.h, pass: 'bwd', path: 'sm80', plan: 'auto' },
    errorBaselines: ['torch-efficient'],
  };
}

/** Every backward case of the suite, in order. */
export const FFPA_BWD_BENCH_CASES: readonly FmhaBwdBenchCase[] = Object.freeze(FFPA_BWD_BENCH_SHAPES.map(ffpaBwdBenchCase));
