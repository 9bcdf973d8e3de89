// The cases of the sparge benchmark suite: Sparge attention (vsa pipeline, fp16, bhsd, self-attention)
// at b2 h16 d128 over sequence lengths, topk, PV modes, int8 Q·Kᵀ and causal; what the torch
// reference server runs for each (REFERENCE_OPS.md `sparge`) and the dense-equivalent FLOPs.
import { SPARGE_DEFAULTS, type SpargePvModeName } from '@tilekit/kernel-sparge';
import type { SuiteCase } from '../benchSuite.ts';
import { attentionForwardFlops } from '../flops.ts';
import { SPARGE_INPUT_SEED, spargeInputsGenerator } from './spargeInputs.ts';

/** Sparge's tiles (the attention kernel's): the block map is built on 128 × 128 blocks. */
export const SPARGE_BLOCK = 128;

/** One benchmarked Sparge problem (self-attention, fp16, bhsd, vsa pipeline). */
export interface SpargeBenchSpec {
  readonly b: number;
  readonly h: number;
  readonly s: number;
  readonly d: 64 | 128;
  readonly topk: number;
  readonly causal: boolean;
  readonly int8: boolean;
  readonly pvMode: SpargePvModeName;
  /** PV-skip threshold (log2 units); only meaningful with pvMode warp/block. */
  readonly pvThreshold: number;
}

/** A case as the suite registers it, with its spec and dense-equivalent FLOPs. */
export interface SpargeBenchCase extends SuiteCase {
  readonly spec: SpargeBenchSpec;
  readonly flops: number;
}

/** `sparge_b2_h16_s8192_d128_topk0.4_fp16`, with `_causal`, `_int8`, `_pv-warp8` (a PV mode or a non-default threshold) when they apply. */
export function spargeBenchName(c: SpargeBenchSpec): string {
  const pv = c.pvMode === 'none' && c.pvThreshold === SPARGE_DEFAULTS.pvThreshold ? '' : `_pv-${c.pvMode}${c.pvThreshold}`;
  return `sparge_b${c.b}_h${c.h}_s${c.s}_d${c.d}_topk${c.topk}${c.causal ? '_causal' : ''}${c.int8 ? '_int8' : ''}${pv}_fp16`;
}

/** Dense-equivalent FLOPs (docs/benchmarks.md): 4·b·h·s²·d, halved for causal. */
export function spargeDenseFlops(c: SpargeBenchSpec): number {
  return attentionForwardFlops({ b: c.b, h: c.h, sq: c.s, sk: c.s, dQk: c.d, causal: c.causal });
}

/** The `sparge` reference op's params (REFERENCE_OPS.md): attention_fwd's for self-attention in bhsd, plus the block sizes. */
export function spargeReferenceParams(c: SpargeBenchSpec): Readonly<Record<string, unknown>> {
  return {
    dtype: 'fp16',
    b: c.b,
    h: c.h,
    hk: c.h,
    sq: c.s,
    sk: c.s,
    d: c.d,
    dv: c.d,
    causal: c.causal,
    layout: 'bhsd',
    block_q: SPARGE_BLOCK,
    block_k: SPARGE_BLOCK,
  };
}

/** The case of a spec: flat params (inputs described), the reference op, fp16 O judged against torch's SDPA backends' error. */
export function spargeBenchCase(c: SpargeBenchSpec): SpargeBenchCase {
  const params = {
    dtype: 'fp16',
    b: c.b,
    h: c.h,
    s: c.s,
    d: c.d,
    topk: c.topk,
    causal: c.causal,
    int8: c.int8,
    pipeline: 'vsa',
    pvMode: c.pvMode,
    pvThreshold: c.pvThreshold,
    inputs: spargeInputsGenerator(c),
  };
  return {
    name: spargeBenchName(c),
    params,
    reference: { op: 'sparge', params: spargeReferenceParams(c) },
    seed: SPARGE_INPUT_SEED,
    precision: { o: 'fp16' },
    errorBaselines: ['torch-flash', 'torch-cudnn', 'torch-efficient'],
    spec: c,
    flops: spargeDenseFlops(c),
  };
}

/** The topk values of the sweep. */
export const SPARGE_BENCH_TOPKS: readonly number[] = Object.freeze([0.1, 0.2, 0.4, 0.5, 0.7, 1.0]);

const base = {
  b: 2,
  h: 16,
  d: 128 as const,
  causal: false,
  int8: false,
  pvMode: 'none' as SpargePvModeName,
  pvThreshold: SPARGE_DEFAULTS.pvThreshold,
};

/**
 * The cases, ordered by sequence length (the input slice is drawn once per length): b2 h16
 * d128 fp16 at s ∈ {8192, 16384, 32768} × topk ∈ SPARGE_BENCH_TOPKS; at s 16384: each PV mode (none,
 * warp, block) at topk 0.5 with pvThreshold 8, int8 Q·Kᵀ at topk 0.4 and 0.1, causal at topk 0.4.
 */
export const SPARGE_BENCH_SPECS: readonly SpargeBenchSpec[] = Object.freeze([
  ...SPARGE_BENCH_TOPKS.map((topk) => ({ ...base, s: 8192, topk })),
  ...SPARGE_BENCH_TOPKS.map((topk) => ({ ...base, s: 16384, topk })),
  ...(['none', 'warp', 'block'] as const).map((pvMode) => ({ ...base, s: 16384, topk: 0.5, pvMode, pvThreshold: 8 })),
  ...[0.4, 0.1].map((topk) => ({ ...base, s: 16384, topk, int8: true })),
  { ...base, s: 16384, topk: 0.4, causal: true },
  ...SPARGE_BENCH_TOPKS.map((topk) => ({ ...base, s: 32768, topk })),
]);

/** Every case of the suite, in order. */
export const SPARGE_BENCH_CASES: readonly SpargeBenchCase[] = Object.freeze(SPARGE_BENCH_SPECS.map(spargeBenchCase));
