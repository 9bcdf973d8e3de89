// The randomized GEMM spec's check, exercised without a GPU: the reference rounded to the dtype inside
// the product and the sentinel outside it (what a correct kernel leaves) passes on every drawn
// configuration; a wrong element or a write into the padding does not.
import { encode } from '@tilekit/numeric';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkGemmProblem, gemmOperandElements, type CheckedGemmProblem } from '../gemmProblem.ts';
import { checkGemmRandomOutput, GEMM_RANDOM_C_SENTINEL, gemmRandomReference, type GemmRandomReference } from './gemmRandomGpuCase.ts';
import { gemmRandomConfigArb } from './randomGemmConfig.ts';

/** C as a correct kernel leaves it: the reference rounded inside the product, the sentinel elsewhere. */
function correctOutput(p: CheckedGemmProblem, ref: GemmRandomReference): Uint16Array {
  const out = new Uint16Array(gemmOperandElements(p).c).fill(GEMM_RANDOM_C_SENTINEL);
  for (let x = 0; x < p.batch; x++)
    for (let i = 0; i < p.m; i++)
      for (let j = 0; j < p.n; j++) out[x * p.batchStrideC + i * p.ldc + j] = encode(p.dtype, ref.c[x * p.batchStrideC + i * p.ldc + j]!);
  return out;
}

describe('checkGemmRandomOutput', () => {
  it('passes the rounded reference on every drawn configuration and finds one wrong element', () => {
    fc.assert(
      fc.property(gemmRandomConfigArb, (c) => {
        const p = checkGemmProblem(c.problem);
        const ref = gemmRandomReference(p);
        const out = correctOutput(p, ref);
        expect(checkGemmRandomOutput(p, ref, out).bad).toBe(0);
        const last = (p.batch - 1) * p.batchStrideC + (p.m - 1) * p.ldc + p.n - 1;
        out[last] = encode(p.dtype, ref.c[last]! + 1 + Math.abs(ref.c[last]!));
        expect(checkGemmRandomOutput(p, ref, out).bad).toBe(1);
      }),
      { numRuns: 40 },
    );
  });

  it('finds a write between rows (ldc padding) and between matrices (batch gap)', () => {
    const p = checkGemmProblem({
      dtype: 'fp16',
      layout: 'nt',
      m: 17,
      n: 18,
      k: 8,
      lda: 24,
      ldb: 24,
      ldc: 20,
      batch: 2,
      batchStrideA: 8 * 24 + 8,
      batchStrideB: 8 * 24,
      batchStrideC: 17 * 20 + 2,
    });
    const ref = gemmRandomReference(p);
    for (const at of [18, 17 * 20]) {
      const out = correctOutput(p, ref);
      out[at] = 0;
      expect(checkGemmRandomOutput(p, ref, out).bad).toBe(1);
    }
  });
});
