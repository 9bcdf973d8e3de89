import { isIdentityEpilogue } from '@tilekit/gemm';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GEMM_EPILOGUE_INSTANCES } from '../gemmCatalog.ts';
import { checkGemmProblem, GEMM_LAYOUTS } from '../gemmProblem.ts';
import {
  GEMM_RANDOM_DEFAULT_RUNS,
  GEMM_RANDOM_DEFAULT_SEED,
  GEMM_RANDOM_K,
  GEMM_RANDOM_MAX_COST,
  GEMM_RANDOM_MN,
  fitGemmToCost,
  gemmRandomConfigArb,
  gemmRandomConfigs,
  gemmRandomCost,
  gemmRandomInstance,
  gemmRandomLabel,
} from './randomGemmConfig.ts';

const defaultDraw = () => gemmRandomConfigs(GEMM_RANDOM_DEFAULT_SEED, GEMM_RANDOM_DEFAULT_RUNS);

describe('gemmRandomConfigArb', () => {
  it('draws problems that pass checkGemmProblem and find their instance (dispatched, or the persistent one), within the cost bound, as one JSON line', () => {
    fc.assert(
      fc.property(gemmRandomConfigArb, (c) => {
        const p = checkGemmProblem(c.problem);
        const instance = gemmRandomInstance(c);
        expect(instance.unsupported(p)).toEqual([]);
        expect(instance.persistent).toBe(c.persistentSmCount !== undefined);
        expect(gemmRandomCost(c)).toBeLessThanOrEqual(GEMM_RANDOM_MAX_COST);
        const line = JSON.stringify(c);
        expect(line).not.toContain('\n');
        expect(JSON.parse(line)).toEqual(c);
        expect(gemmRandomLabel(c)).not.toContain('\n');
      }),
      { numRuns: 500 },
    );
  });

  it('draws the same configurations from the same seed, and others from another', () => {
    expect(gemmRandomConfigs(7, 20)).toEqual(gemmRandomConfigs(7, 20));
    expect(gemmRandomConfigs(8, 20)).not.toEqual(gemmRandomConfigs(7, 20));
  });

  it('the default draw covers every dtype and layout, both C stores, padding, batches, every epilogue functor and the persistent scheduler', () => {
    const draws = defaultDraw();
    const checked = draws.map((c) => checkGemmProblem(c.problem));
    const instances = draws.map(gemmRandomInstance);
    expect(new Set(checked.map((p) => `${p.dtype} ${p.layout}`)).size).toBe(2 * GEMM_LAYOUTS.length);
    expect(new Set(instances.map((i) => i.policy.cVector))).toEqual(new Set([1, 2]));
    expect(
      checked.some((p) => p.ldc > p.n) &&
        checked.some((p) => p.batch > 1) &&
        checked.some((p) => p.m === 1) &&
        checked.some((p) => p.k < 64),
    ).toBe(true);
    const functors = new Set(instances.filter((i) => !isIdentityEpilogue(i.epilogue)).map((i) => `${i.dtype} ${i.epilogue.activation}`));
    expect(functors).toEqual(new Set(GEMM_EPILOGUE_INSTANCES.map((f) => `${f.dtype} ${f.epilogue.activation}`)));
    expect(draws.some((c) => c.persistentSmCount === 1) && draws.some((c) => (c.persistentSmCount ?? 0) > 1)).toBe(true);
  });

  it('the default draw keeps the CPU reference cheap: on average at most 40% of the bound', () => {
    const costs = defaultDraw().map(gemmRandomCost);
    expect(costs.reduce((a, b) => a + b, 0) / costs.length).toBeLessThanOrEqual(0.4 * GEMM_RANDOM_MAX_COST);
  });
});

describe('fitGemmToCost', () => {
  it('keeps m, n, k in their sets (n even when asked), each at most the drawn one (n + 1 for an even 1), within the bound unless none can shrink', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...GEMM_RANDOM_MN),
        fc.constantFrom(...GEMM_RANDOM_MN),
        fc.constantFrom(...GEMM_RANDOM_K),
        fc.integer({ min: 1, max: 3 }),
        fc.boolean(),
        fc.integer({ min: 1, max: 5_000_000 }),
        (m, n, k, batch, even, cap) => {
          const fit = fitGemmToCost({ m, n, k, batch }, even, cap);
          expect(GEMM_RANDOM_MN).toContain(fit.m);
          expect(GEMM_RANDOM_K).toContain(fit.k);
          if (even) expect(fit.n % 2).toBe(0);
          else expect(GEMM_RANDOM_MN).toContain(fit.n);
          expect(fit.m <= m && fit.k <= k && fit.n <= Math.max(n, 2)).toBe(true);
          expect(batch * fit.m * fit.n * fit.k <= cap || (fit.m === 1 && fit.k === 1 && fit.n <= 2)).toBe(true);
        },
      ),
    );
  });
});
