// The cases of the gemm benchmark suite: the problems, their names (the results history is keyed
// by them), our params, and what the torch reference server runs for each (REFERENCE_OPS.md's
// `gemm` op). The suite itself (running ours) lives in gemm.ts.
//
// Layouts (BLAS names, kernels/gemm's GEMM_LAYOUTS: first letter A, second B; t = row-major,
// n = column-major; C row-major): each case passes its layout to the server, which builds the same
// storage as (transposed) views, so cuBLAS gets the same transposes as ours. Where ours pads rows
// (the ragged case: K = 4100 rows at a pitch of 4104 for TMA's 16-byte strides) the case passes
// the same lda/ldb, so cuBLAS reads the same strides. Same C = A·B, same 2·M·N·K flops.
//
// One extra case runs the sm_80 family (cp.async + ldmatrix + mma.sync, built for sm_90a) by name at
// 4096³ (`gemm_fp16_4096x4096x4096_sm80`), so the speed of the Ampere-style kernel on Hopper is on
// record beside the wgmma one; it is not a tuning target.
import {
  checkGemmProblem,
  findAnyGemmInstance,
  formatGemmProblem,
  GemmInstance,
  selectGemmInstance,
  type AnyGemmInstance,
  type CheckedGemmProblem,
  type GemmDType,
  type GemmLayoutName,
  type GemmProblem,
} from '@tilekit/kernel-gemm';
import { ArgumentError } from '@tilekit/numeric';
import type { SuiteCase } from '../benchSuite.ts';
import { caseSeed } from './caseSeed.ts';
import { gemmOperandRows } from './gemmOperandRows.ts';

/**
 * The benchmarked problems: fp16 and bf16 at 8192³, 4096³, 2048³, a ragged 4097×4095×4100 (K
 * rows padded to 4104 for TMA's 16-byte strides), a shallow 8192×8192×1024 and a skinny 16×8192×8192
 * (one M tile: no split-K yet, so few blocks), all `tn`; then 4096³ in each other layout (nn,
 * nt, tt: an M- or N-major operand).
 */
export const GEMM_BENCH_PROBLEMS: readonly GemmProblem[] = (['fp16', 'bf16'] as const).flatMap((dtype: GemmDType): GemmProblem[] => [
  { dtype, m: 8192, n: 8192, k: 8192 },
  { dtype, m: 4096, n: 4096, k: 4096 },
  { dtype, m: 2048, n: 2048, k: 2048 },
  { dtype, m: 4097, n: 4095, k: 4100, lda: 4104, ldb: 4104 },
  { dtype, m: 8192, n: 8192, k: 1024 },
  { dtype, m: 16, n: 8192, k: 8192 },
  ...(['nn', 'nt', 'tt'] as const).map((layout) => ({ dtype, m: 4096, n: 4096, k: 4096, layout })),
]);

/** A benchmarked problem, optionally run by a named catalog instance instead of the dispatched one. */
export interface GemmBenchCase {
  readonly problem: GemmProblem;
  /**
   * A catalog instance name, sm_90a or sm_80 family (the case is then named after the problem +
   * `_persistent` for a persistent instance, `_sm80` for an sm_80-family one, else + `_<instance>`).
   */
  readonly instance?: string;
}

/** The sm_80-family instance the suite records (its sm_90a build: the bench runs on the H100/H200). */
export const GEMM_BENCH_SM80_INSTANCE = 'gemm_sm80_mma_fp16_tn_128x128x32_w2x4_s4_v1_sm_90a';

/**
 * Every case of the suite: {@link GEMM_BENCH_PROBLEMS} dispatched, then the persistent-scheduler
 * instances by name at 8192³ (fp16 and bf16; torch's side is the same as the dispatched case's),
 * then the sm_80 family's fp16 `tn` kernel by name at 4096³ ({@link GEMM_BENCH_SM80_INSTANCE}).
 */
export const GEMM_BENCH_CASES: readonly GemmBenchCase[] = [
  ...GEMM_BENCH_PROBLEMS.map((problem) => ({ problem })),
  ...(['fp16', 'bf16'] as const).map((dtype) => ({
    problem: { dtype, m: 8192, n: 8192, k: 8192 },
    instance: `gemm_sm90_ws_${dtype}_tn_128x256x64_s4_v2_persistent`,
  })),
  { problem: { dtype: 'fp16', m: 4096, n: 4096, k: 4096 }, instance: GEMM_BENCH_SM80_INSTANCE },
];

/** `_persistent`, `_sm80` or `_<name>`: what a named instance adds to its case name. */
function instanceSuffix(instance: AnyGemmInstance): string {
  if (!(instance instanceof GemmInstance)) return '_sm80';
  return instance.persistent ? '_persistent' : `_${instance.name}`;
}

/** `gemm_fp16_4096x4096x4096`, with `_<layout>` for layouts other than tn (existing case names unchanged). */
function caseName(p: GemmProblem): string {
  const layout = p.layout === undefined || p.layout === 'tn' ? '' : `_${p.layout}`;
  return `gemm_${p.dtype}_${p.m}x${p.n}x${p.k}${layout}`;
}

/** The named instance, checked to exist and to run the problem. */
function namedInstance(name: string, p: CheckedGemmProblem): AnyGemmInstance {
  const named = findAnyGemmInstance(name);
  if (named === undefined) throw new ArgumentError('instance', 'must name a gemm catalog instance', name);
  const reasons = named.unsupported(p);
  if (reasons.length > 0) throw new ArgumentError('instance', `${name} cannot run ${formatGemmProblem(p)}: ${reasons.join('; ')}`, name);
  return named;
}

/**
 * REFERENCE_OPS.md's gemm params: sizes, dtype and layout, plus `lda` / `ldb` where ours stores an
 * operand's rows wider than packed, so torch's operands get the same pitches.
 */
export function gemmReferenceParams(p: CheckedGemmProblem): Readonly<Record<string, string | number>> {
  const rows = gemmOperandRows(p);
  return {
    dtype: p.dtype,
    m: p.m,
    n: p.n,
    k: p.k,
    layout: p.layout,
    ...(rows.a.pitch === rows.a.cols ? {} : { lda: rows.a.pitch }),
    ...(rows.b.pitch === rows.b.cols ? {} : { ldb: rows.b.pitch }),
  };
}

/** The suite case of a problem (and named instance): our params, and the server's `gemm` on the same inputs and strides. */
export function gemmSuiteCase(p: GemmProblem, instance?: string): SuiteCase {
  const c = checkGemmProblem(p);
  const suffix = instance === undefined ? '' : instanceSuffix(namedInstance(instance, c));
  const name = `${caseName(p)}${suffix}`;
  return {
    name,
    params: {
      dtype: c.dtype,
      layout: c.layout,
      m: c.m,
      n: c.n,
      k: c.k,
      lda: c.lda,
      ldb: c.ldb,
      ldc: c.ldc,
      ...(instance === undefined ? {} : { instance }),
    },
    reference: { op: 'gemm', params: gemmReferenceParams(c) },
    seed: caseSeed(name),
    precision: { c: c.dtype },
    errorBaselines: ['torch-matmul'],
  };
}

/** The checked problem a case's params describe. */
export function gemmCaseProblem(c: SuiteCase): CheckedGemmProblem {
  const p = c.params as Record<string, number | string>;
  return checkGemmProblem({
    dtype: p['dtype'] as GemmDType,
    layout: p['layout'] as GemmLayoutName,
    m: p['m'] as number,
    n: p['n'] as number,
    k: p['k'] as number,
    lda: p['lda'] as number,
    ldb: p['ldb'] as number,
    ldc: p['ldc'] as number,
  });
}

/** The case's named instance, or the one dispatch selects for its problem. */
export function gemmCaseInstance(c: SuiteCase, p: CheckedGemmProblem): AnyGemmInstance {
  const named = c.params['instance'];
  return typeof named === 'string' ? namedInstance(named, p) : selectGemmInstance(p);
}
