import { fc, test } from '@fast-check/vitest';
import { HostTensor } from '@tilekit/host';
import { describe, expect, it } from 'vitest';
import { comparePermutedBits, fillPatternBits, permuteReference, storageBits } from './permuteReference.ts';
import type { PermuteProblem } from './permuteProblem.ts';

const small = fc.oneof(
  fc.record({
    kind: fc.constantFrom('bhsd2bshd' as const, 'bshd2bhsd' as const),
    dtype: fc.constantFrom('fp16' as const, 'fp32' as const),
    b: fc.integer({ min: 1, max: 3 }),
    h: fc.integer({ min: 1, max: 5 }),
    s: fc.integer({ min: 1, max: 7 }),
    d: fc.integer({ min: 1, max: 9 }),
  }),
  fc.record({
    kind: fc.constant('transpose' as const),
    dtype: fc.constantFrom('fp16' as const, 'fp32' as const),
    m: fc.integer({ min: 1, max: 130 }),
    n: fc.integer({ min: 1, max: 70 }),
  }),
);

function shapeOf(p: PermuteProblem): number[] {
  if (p.kind === 'transpose') return [p.m, p.n];
  return p.kind === 'bhsd2bshd' ? [p.b, p.h, p.s, p.d] : [p.b, p.s, p.h, p.d];
}

describe('permute references', () => {
  test.prop([small, fc.integer()], { numRuns: 60 })('the bit comparison agrees with HostTensor.permute().contiguous()', (problem, seed) => {
    const input = HostTensor.empty(problem.dtype, shapeOf(problem));
    fillPatternBits(storageBits(input), seed);
    const ref = permuteReference(problem, input);
    const bits = storageBits;
    expect(comparePermutedBits(problem, bits(input), bits(ref)).mismatches).toBe(0);
    const broken = bits(ref).slice();
    const at = Math.abs(seed) % broken.length;
    broken[at] = broken[at]! ^ 1;
    const result = comparePermutedBits(problem, bits(input), broken);
    expect(result.mismatches).toBe(1);
    expect(result.first?.index).toBe(at);
  });

  it('rejects an input of the wrong shape', () => {
    expect(() => permuteReference({ kind: 'transpose', dtype: 'fp16', m: 2, n: 3 }, HostTensor.empty('fp16', [3, 2]))).toThrow(/input/);
  });
});
