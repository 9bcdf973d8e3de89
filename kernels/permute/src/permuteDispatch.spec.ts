import { fc, test } from '@fast-check/vitest';
import { ArgumentError } from '@tilekit/numeric';
import { describe, expect, it } from 'vitest';
import { PERMUTE_CATALOG } from './permuteCatalog.ts';
import { NoPermuteInstanceError, selectPermuteInstance } from './permuteDispatch.ts';
import { HeadPermuteInstance, TransposeInstance } from './permuteInstance.ts';
import { checkPermuteProblem, permuteShapes, PERMUTE_DTYPES, type PermuteProblem } from './permuteProblem.ts';

const headProblem = fc.record({
  kind: fc.constantFrom('bhsd2bshd' as const, 'bshd2bhsd' as const),
  dtype: fc.constantFrom(...PERMUTE_DTYPES),
  b: fc.integer({ min: 1, max: 64 }),
  h: fc.integer({ min: 1, max: 128 }),
  s: fc.integer({ min: 1, max: 1 << 16 }),
  d: fc.integer({ min: 1, max: 1024 }),
});
const transposeProblem = fc.record({
  kind: fc.constant('transpose' as const),
  dtype: fc.constantFrom(...PERMUTE_DTYPES),
  m: fc.integer({ min: 1, max: 100_000 }),
  n: fc.integer({ min: 1, max: 100_000 }),
});

describe('permute problem', () => {
  it('knows the shapes and axes of each kind', () => {
    expect(permuteShapes({ kind: 'bhsd2bshd', dtype: 'fp16', b: 2, h: 3, s: 5, d: 8 })).toEqual({
      input: [2, 3, 5, 8],
      output: [2, 5, 3, 8],
      axes: [0, 2, 1, 3],
    });
    expect(permuteShapes({ kind: 'bshd2bhsd', dtype: 'fp16', b: 2, h: 3, s: 5, d: 8 })).toEqual({
      input: [2, 5, 3, 8],
      output: [2, 3, 5, 8],
      axes: [0, 2, 1, 3],
    });
    expect(permuteShapes({ kind: 'transpose', dtype: 'fp32', m: 4, n: 6 })).toEqual({ input: [4, 6], output: [6, 4], axes: [1, 0] });
  });

  it.each([
    [{ kind: 'bhsd2bshd', dtype: 'fp16', b: 0, h: 1, s: 1, d: 8 }, 'problem.b'],
    [{ kind: 'bhsd2bshd', dtype: 'fp16', b: 1, h: 1.5, s: 1, d: 8 }, 'problem.h'],
    [{ kind: 'swap', dtype: 'fp16', b: 1, h: 1, s: 1, d: 8 }, 'problem.kind'],
    [{ kind: 'transpose', dtype: 'fp8e4m3fn', m: 1, n: 1 }, 'problem.dtype'],
    [{ kind: 'transpose', dtype: 'fp32', m: 1, n: -4 }, 'problem.n'],
  ])('rejects %j naming %s', (problem, argument) => {
    expect(() => checkPermuteProblem(problem as PermuteProblem)).toThrow(expect.objectContaining({ argument }));
  });
});

describe('dispatch', () => {
  it('takes 16-byte vectors and the tile the (x, d/V) plane fills for the benchmark shapes', () => {
    expect(selectPermuteInstance({ kind: 'bhsd2bshd', dtype: 'fp16', b: 16, h: 32, s: 8192, d: 128 }).name).toBe(
      'permute_head_fp16_v16_t256_u2_r2',
    );
    expect(selectPermuteInstance({ kind: 'bshd2bhsd', dtype: 'bf16', b: 16, h: 32, s: 8192, d: 128 }).name).toBe(
      'permute_head_bf16_v16_t256_u4_r1',
    );
    expect(selectPermuteInstance({ kind: 'bhsd2bshd', dtype: 'fp16', b: 16, h: 32, s: 16384, d: 64 }).name).toBe(
      'permute_head_fp16_v16_t256_u1_r4',
    );
    expect(selectPermuteInstance({ kind: 'transpose', dtype: 'fp16', m: 16384, n: 32768 }).name).toBe(
      'permute_transpose_fp16_v16_128x64_t256_r8_i32',
    );
    expect(selectPermuteInstance({ kind: 'transpose', dtype: 'fp32', m: 65536, n: 8192 }).name).toBe(
      'permute_transpose_fp32_v16_128x64_t256_r8_i64',
    );
  });

  it('falls back to narrower vectors for odd sizes and for misaligned pointers', () => {
    expect(selectPermuteInstance({ kind: 'bhsd2bshd', dtype: 'fp16', b: 1, h: 2, s: 3, d: 36 }).vectorBytes).toBe(8);
    expect(selectPermuteInstance({ kind: 'bhsd2bshd', dtype: 'fp16', b: 1, h: 2, s: 3, d: 33 }).vectorBytes).toBe(2);
    expect(selectPermuteInstance({ kind: 'transpose', dtype: 'bf16', m: 8, n: 12 }).vectorBytes).toBe(2);
    expect(
      selectPermuteInstance({ kind: 'bhsd2bshd', dtype: 'fp32', b: 1, h: 2, s: 3, d: 64 }, { alignment: { src: 256, dst: 8 } }).vectorBytes,
    ).toBe(8);
  });

  it('says which predicates failed when nothing matches', () => {
    let error: unknown;
    try {
      selectPermuteInstance({ kind: 'bhsd2bshd', dtype: 'fp16', b: 1, h: 2, s: 3, d: 2048 });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(NoPermuteInstanceError);
    const message = (error as Error).message;
    expect(message).toContain('no permute instance runs bhsd2bshd fp16 b1 h2 s3 d2048:');
    expect(message).toContain('permute_head_fp16_v16_t256_u4_r1: d = 2048 exceeds 1024');
    expect(message).toMatch(/\(\d+ instance\(s\) of other kinds or dtypes not listed\)/);
    expect((error as NoPermuteInstanceError).rejections).toHaveLength(16);
  });

  it('rejects a malformed problem with an ArgumentError before looking at instances', () => {
    expect(() => selectPermuteInstance({ kind: 'transpose', dtype: 'fp16', m: 0, n: 4 })).toThrow(ArgumentError);
  });

  test.prop([fc.oneof(headProblem, transposeProblem)])(
    'the selected instance supports the problem and no supporting instance is preferred over it',
    (problem) => {
      let chosen;
      try {
        chosen = selectPermuteInstance(problem);
      } catch (e) {
        expect(e).toBeInstanceOf(NoPermuteInstanceError);
        expect(PERMUTE_CATALOG.every((i) => i.unsupported(problem).length > 0)).toBe(true);
        return;
      }
      expect(chosen.unsupported(problem)).toEqual([]);
      expect(chosen.kinds).toContain(problem.kind);
      expect(chosen.dtype).toBe(problem.dtype);
      const pref = chosen.preference(problem);
      for (const other of PERMUTE_CATALOG) {
        if (other.unsupported(problem).length > 0) continue;
        const p = other.preference(problem);
        const i = p.findIndex((v, k) => v !== pref[k]);
        if (i >= 0) expect(p[i]!).toBeGreaterThan(pref[i]!);
      }
    },
  );

  test.prop([headProblem])('head launches cover the (x, d/V) plane with whole tiles and y with whole row blocks', (problem) => {
    const instance = PERMUTE_CATALOG.find((i) => i instanceof HeadPermuteInstance && i.unsupported(problem).length === 0) as
      HeadPermuteInstance | undefined;
    fc.pre(instance !== undefined);
    const { grid, block } = instance!.launch(problem);
    const { x, y } = HeadPermuteInstance.axes(problem as Parameters<typeof HeadPermuteInstance.axes>[0]);
    expect(grid[0]).toBe(Math.ceil(y / instance!.rows));
    expect(grid[2]).toBe(problem.b);
    expect(grid[1] * instance!.tile).toBeGreaterThanOrEqual((x * problem.d) / instance!.vectorElements);
    expect((grid[1] - 1) * instance!.tile).toBeLessThan((x * problem.d) / instance!.vectorElements);
    expect(block).toEqual([instance!.threads, 1, 1]);
  });

  test.prop([transposeProblem])('transpose launches cover the matrix with whole tiles', (problem) => {
    for (const instance of PERMUTE_CATALOG) {
      if (!(instance instanceof TransposeInstance) || instance.unsupported(problem).length > 0) continue;
      const { grid } = instance.launch(problem);
      expect(grid).toEqual([Math.ceil(problem.n / instance.policy.tileN), Math.ceil(problem.m / instance.policy.tileM), 1]);
    }
  });
});
