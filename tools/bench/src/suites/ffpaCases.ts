// The cases of the ffpa benchmark suite (issue 19): large-head-dim attention forward against PyTorch
// SDPA's memory-efficient backend, the only torch backend that runs head dims above 256 (the others
// are tried by the reference server and recorded as errors). The shapes are the issue's: B=1 H=32
// N=8192 bf16 over the head dims, d512 causal, d512 GQA h_k=8 (torch repeats K/V heads inside the
// timed call), d512 at N=16384, and a varlen batch. Inputs, reference and judging are attention_fwd's
// (REFERENCE_OPS.md), as in the fmha-fwd suite whose shape helpers these reuse.
import type { FfpaPath } from '@tilekit/kernel-ffpa';
import type { SuiteCase } from '../benchSuite.ts';
import { caseSeed } from './caseSeed.ts';
import {
  fmhaFwdBenchFlops,
  fmhaFwdBenchName,
  fmhaFwdRecordParams,
  fmhaFwdReferenceParams,
  FMHA_FWD_VARLEN_SEQLENS,
  type FmhaFwdBenchShape,
} from './fmhaFwdCases.ts';

/** How a case plans d_v above 512: the operator's choice, or column slices (the measurement behind the choice). */
export type FfpaBenchPlan = 'auto' | 'slices';

/** A case of the suite: an fmha-fwd shape with the suite's record params (`pass`, `path`, `plan`). */
export interface FfpaBenchCase extends SuiteCase {
  readonly shape: FmhaFwdBenchShape;
  readonly path: FfpaPath;
  readonly plan: FfpaBenchPlan;
  readonly flops: number;
}

/** `ffpa_fwd_b1_h32_s8192_d512_bf16`, …: the fmha-fwd name with the suite's prefix. */
export function ffpaBenchName(s: FmhaFwdBenchShape): string {
  return fmhaFwdBenchName(s).replace(/^fmha_fwd_/, 'ffpa_fwd_');
}

/**
 * The case of a shape on a path (`_sm80` names the sm_80 path) and plan (`_slices`): O judged at the
 * input dtype against torch-efficient's error (the only backend that runs).
 */
export function ffpaBenchCase(s: FmhaFwdBenchShape, plan: FfpaBenchPlan = 'auto', path: FfpaPath = 'sm90'): FfpaBenchCase {
  const name = `${ffpaBenchName(s)}${plan === 'slices' ? '_slices' : ''}${path === 'sm80' ? '_sm80' : ''}`;
  return {
    name,
    params: { ...fmhaFwdRecordParams(s), pass: 'fwd', path, plan },
    reference: { op: 'attention_fwd', params: fmhaFwdReferenceParams(s) },
    seed: caseSeed(name),
    precision: { o: s.dtype },
    errorBaselines: s.seqlensQ !== undefined ? ['torch-efficient', 'torch-efficient-looped'] : ['torch-efficient'],
    shape: s,
    path,
    plan,
    flops: fmhaFwdBenchFlops(s),
  };
}

const shape = (d: number, extra: Partial<FmhaFwdBenchShape> = {}): FmhaFwdBenchShape => ({
  dtype: 'bf16',
  b: 1,
  h: 32,
  hk: 32,
  d,
  dv: d,
  causal: false,
  sq: 8192,
  sk: 8192,
  ...extra,
});

/** The forward shapes: d 320 … 1024 (sm_90a path), 576 / 512, and at d 512 causal, GQA, N 16384 and varlen. */
export const FFPA_BENCH_SHAPES: readonly FmhaFwdBenchShape[] = Object.freeze([
  ...[320, 384, 448, 512, 640, 768, 896, 1024].map((d) => shape(d)),
  shape(576, { dv: 512 }),
  shape(512, { causal: true }),
  shape(512, { hk: 8 }),
  shape(512, { sq: 16384, sk: 16384 }),
  {
    dtype: 'bf16',
    b: FMHA_FWD_VARLEN_SEQLENS.length,
    h: 32,
    hk: 32,
    d: 512,
    dv: 512,
    causal: false,
    seqlensQ: FMHA_FWD_VARLEN_SEQLENS,
    seqlensK: FMHA_FWD_VARLEN_SEQLENS,
  },
]);

/**
 * Every case of the suite, in order: each shape with the operator's plan, then d 640 and 768 on column
 * slices (the plan the cluster replaces there), so that the record holds the measurement behind the
 * choice, then the sm_80 path (FFPA L1 on mma.sync, 256 columns of O per CTA) at d 320, 512 and 1024.
 */
export const FFPA_BENCH_CASES: readonly FfpaBenchCase[] = Object.freeze([
  ...FFPA_BENCH_SHAPES.map((s) => ffpaBenchCase(s)),
  ...[640, 768].map((d) => ffpaBenchCase(shape(d), 'slices')),
  ...[320, 512, 1024].map((d) => ffpaBenchCase(shape(d), 'auto', 'sm80')),
]);
