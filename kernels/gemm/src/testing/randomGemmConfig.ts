// Random valid GEMM configurations for the randomized GPU spec (gemmRandom.gpu.spec.ts): a fast-check
// arbitrary of small ragged problems over every layout, padded leading dimensions, batches, the
// epilogue functors and the persistent scheduler, kept cheap for the CPU reference, drawn
// reproducibly from a seed, and replayable from one JSON line; and the instance each one runs on.
import { ArgumentError } from '@tilekit/numeric';
import fc from 'fast-check';
import { GEMM_CATALOG, GEMM_EPILOGUE_INSTANCES } from '../gemmCatalog.ts';
import { selectGemmInstance } from '../gemmDispatch.ts';
import type { GemmInstance } from '../gemmInstance.ts';
import {
  checkGemmProblem,
  formatGemmProblem,
  GEMM_DTYPES,
  GEMM_LAYOUTS,
  gemmOperandStorage,
  type GemmDType,
  type GemmLayoutName,
  type GemmProblem,
} from '../gemmProblem.ts';

/** M and N the draws pick from: around the 64/128-wide tiles, and a ragged 259. */
export const GEMM_RANDOM_MN: readonly number[] = Object.freeze([1, 2, 17, 63, 64, 65, 127, 128, 129, 259]);

/** K the draws pick from: below one 64-deep K tile, around it, and deep enough (520) to wrap the 4-stage ring. */
export const GEMM_RANDOM_K: readonly number[] = Object.freeze([1, 2, 8, 17, 63, 64, 65, 127, 128, 129, 259, 520]);

/** The most multiply-adds of the CPU reference per case (batch·m·n·k): ~20 ms in node. */
export const GEMM_RANDOM_MAX_COST = 2_000_000;

/** The seed of the GPU spec's draw when TILEKIT_RANDOM_SEED is not set. */
export const GEMM_RANDOM_DEFAULT_SEED = 20261126;

/** Cases of the GPU spec when TILEKIT_RANDOM_RUNS is not set. */
export const GEMM_RANDOM_DEFAULT_RUNS = 200;

/** One random case: the problem, and the SM count of a persistent-scheduler run (absent: the dispatched instance). */
export interface GemmRandomConfig {
  readonly problem: GemmProblem;
  readonly persistentSmCount?: number;
}

interface DrawnGemm {
  readonly dtype: GemmDType;
  readonly layout: GemmLayoutName;
  readonly m: number;
  readonly n: number;
  readonly k: number;
  /** Elements added to the leading dimensions (A and B: multiples of 8, TMA's 16-byte rule). */
  readonly padA: number;
  readonly padB: number;
  readonly padC: number;
  readonly batch: number;
  /** Elements added to the packed batch strides. */
  readonly gapA: number;
  readonly gapB: number;
  readonly gapC: number;
  /** An index into the epilogue instances of the dtype, or null for the identity. */
  readonly functor: number | null;
  readonly alpha: number;
  readonly persistentSmCount: number | null;
}

/** The next shorter value of `set` below `x` (1 at the bottom). */
function shorter(set: readonly number[], x: number): number {
  return [...set].reverse().find((v) => v < x) ?? 1;
}

/** An even N for the instances that store two C elements at a time: odd n − 1, and 1 → 2. */
function evenN(n: number): number {
  return n === 1 ? 2 : n - (n % 2);
}

/** m, n, k with the largest shortened until batch·m·n·k ≤ `maxCost` or none can shrink (n kept even when `even`). */
export function fitGemmToCost(
  d: { readonly m: number; readonly n: number; readonly k: number; readonly batch: number },
  even: boolean,
  maxCost: number,
): { m: number; n: number; k: number } {
  const dims = { m: d.m, n: even ? evenN(d.n) : d.n, k: d.k };
  const shrink = {
    m: (x: number) => shorter(GEMM_RANDOM_MN, x),
    n: (x: number) => (even ? evenN(shorter(GEMM_RANDOM_MN, x)) : shorter(GEMM_RANDOM_MN, x)),
    k: (x: number) => shorter(GEMM_RANDOM_K, x),
  };
  while (d.batch * dims.m * dims.n * dims.k > maxCost) {
    const shrinkable = (['k', 'm', 'n'] as const).filter((key) => shrink[key](dims[key]) < dims[key]);
    if (shrinkable.length === 0) break;
    const largest = shrinkable.reduce((a, b) => (dims[b] > dims[a] ? b : a));
    dims[largest] = shrink[largest](dims[largest]);
  }
  return dims;
}

const pad8 = (x: number): number => Math.ceil(x / 8) * 8;

/** The configuration of a draw: functor and persistent runs only in layout tn, n and ldc even where the instance stores element pairs. */
function configOf(d: DrawnGemm): GemmRandomConfig {
  const functors = GEMM_EPILOGUE_INSTANCES.filter((f) => f.dtype === d.dtype);
  const functor =
    d.layout === 'tn' && d.functor !== null && functors.length > 0 ? functors[d.functor % functors.length]!.epilogue : undefined;
  const persistent = d.layout === 'tn' && functor === undefined ? d.persistentSmCount : null;
  const even = d.layout !== 'tn' || functor !== undefined || persistent !== null;
  const { m, n, k } = fitGemmToCost(d, even, GEMM_RANDOM_MAX_COST);
  const storage = gemmOperandStorage(d.layout);
  const lda = pad8(storage.a === 'row' ? k : m) + d.padA;
  const ldb = pad8(storage.b === 'col' ? k : n) + d.padB;
  const ldc = n + (even ? d.padC - (d.padC % 2) : d.padC);
  const strides =
    d.batch === 1
      ? {}
      : {
          batch: d.batch,
          batchStrideA: (storage.a === 'row' ? m : k) * lda + d.gapA,
          batchStrideB: (storage.b === 'col' ? n : k) * ldb + d.gapB,
          batchStrideC: m * ldc + d.gapC,
        };
  const epilogue = functor === undefined ? {} : { alpha: d.alpha, bias: functor.bias, activation: functor.activation };
  const problem: GemmProblem = { dtype: d.dtype, layout: d.layout, m, n, k, lda, ldb, ldc, ...strides, ...epilogue };
  return persistent === null ? { problem } : { problem, persistentSmCount: persistent };
}

/**
 * Valid GEMM configurations: fp16/bf16, every layout (tn, nn, nt, tt), m and n from
 * `GEMM_RANDOM_MN`, k from `GEMM_RANDOM_K`, leading dimensions padded to TMA's 8 elements and
 * beyond, ldc padded, batch 1–3 with gaps between the matrices; in layout tn also the epilogue
 * functors of the dtype (alpha, bias, activation) and persistent-scheduler runs on 1–132 SMs.
 * Postconditions (randomGemmConfig.spec.ts): each passes `checkGemmProblem`, `gemmRandomInstance`
 * finds its instance, it costs at most `GEMM_RANDOM_MAX_COST`, and survives a JSON round trip.
 */
export const gemmRandomConfigArb: fc.Arbitrary<GemmRandomConfig> = fc
  .record({
    dtype: fc.constantFrom(...GEMM_DTYPES),
    layout: fc.constantFrom(...GEMM_LAYOUTS),
    m: fc.constantFrom(...GEMM_RANDOM_MN),
    n: fc.constantFrom(...GEMM_RANDOM_MN),
    k: fc.constantFrom(...GEMM_RANDOM_K),
    padA: fc.constantFrom(0, 0, 8, 24),
    padB: fc.constantFrom(0, 0, 8, 24),
    padC: fc.constantFrom(0, 0, 1, 2, 8),
    batch: fc.integer({ min: 1, max: 3 }),
    gapA: fc.constantFrom(0, 8, 64),
    gapB: fc.constantFrom(0, 8, 64),
    gapC: fc.constantFrom(0, 2, 10),
    functor: fc.option(fc.nat({ max: 7 }), { freq: 3 }),
    alpha: fc.constantFrom(1, 0.5, -1.5, 2),
    persistentSmCount: fc.option(fc.constantFrom(1, 2, 3, 5, 132), { freq: 3 }),
  })
  .map(configOf);

/** `runs` configurations drawn from `seed` (the same list for the same arguments). */
export function gemmRandomConfigs(seed: number, runs: number): GemmRandomConfig[] {
  return fc.sample(gemmRandomConfigArb, { seed, numRuns: runs });
}

/** The CPU reference's multiply-adds: batch·m·n·k. */
export function gemmRandomCost(c: GemmRandomConfig): number {
  return (c.problem.batch ?? 1) * c.problem.m * c.problem.n * c.problem.k;
}

/**
 * The instance a configuration runs on: the persistent instance of its dtype when it names an SM
 * count, else the dispatched one (`selectGemmInstance`).
 * @throws ArgumentError (an invalid problem, or one the persistent instance rejects), NoGemmInstanceError.
 */
export function gemmRandomInstance(c: GemmRandomConfig): GemmInstance {
  if (c.persistentSmCount === undefined) return selectGemmInstance(c.problem);
  const p = checkGemmProblem(c.problem);
  const instance = GEMM_CATALOG.find((i) => i.persistent && i.dtype === p.dtype);
  const unmet = instance === undefined ? ['no persistent instance of the dtype'] : instance.unsupported(p);
  if (unmet.length > 0) throw new ArgumentError('problem', `the persistent ${p.dtype} instance cannot run it: ${unmet.join('; ')}`);
  return instance!;
}

/** `bf16 nt 3x64x130x17 (lda 64, …)`, `… persistent on 5 SMs` — a test name. */
export function gemmRandomLabel(c: GemmRandomConfig): string {
  const sms = c.persistentSmCount;
  return `${formatGemmProblem(c.problem)}${sms === undefined ? '' : ` persistent on ${sms} SM${sms > 1 ? 's' : ''}`}`;
}
