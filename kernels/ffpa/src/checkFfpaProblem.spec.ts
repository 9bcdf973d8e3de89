// checkFfpaProblem: every FFPA head-dim pair accepted (batch and group mode, both layouts) with its
// defaults; each FFPA rule and each kernel rule rejected with a typed FmhaFwdArgumentError naming the
// field and the rule; several broken fields listed in one error; and a fuzz of random plausible and
// implausible field values that either pass (as a valid FFPA problem) or throw FmhaFwdArgumentError.
import { FmhaFwdArgumentError } from '@tilekit/fmha';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkFfpaProblem, type FfpaProblem } from './checkFfpaProblem.ts';
import { FFPA_HEAD_DIMS } from './ffpaHeadDims.ts';

/** The seed of the fuzz (recorded for determinism). */
const SEED = 0xff_9a_02;

const BASE = { dtype: 'fp16', batch: 2, nheadQ: 4, nheadK: 2, hdimQ: 512, seqlenQ: 64, seqlenK: 80 } as const;

/** `base` with `over` (fields may be deliberately wrong: the result is untyped on purpose). */
function problem(over: Record<string, unknown> = {}): FfpaProblem {
  return { ...BASE, ...over } as unknown as FfpaProblem;
}

/** The FmhaFwdArgumentError `run` throws (fails the test when it throws anything else or nothing). */
function rejection(run: () => unknown): FmhaFwdArgumentError {
  try {
    run();
  } catch (e) {
    if (e instanceof FmhaFwdArgumentError) return e;
    throw new Error(`threw ${String(e)}, not an FmhaFwdArgumentError`, { cause: e });
  }
  throw new Error('accepted');
}

const LAYOUTS = ['bhsd', 'bshd'] as const;
const MODES = {
  batch: { batch: 2, seqlenQ: 33, seqlenK: 70 },
  group: { batch: 3, seqlenQ: undefined, seqlenK: undefined, seqstartQ: [0, 17, 17, 40], seqstartK: [0, 5, 30, 64] },
} as const;

describe('checkFfpaProblem: accepted problems', () => {
  for (const { hdimQ, hdimV } of FFPA_HEAD_DIMS)
    it(`d${hdimQ} dv${hdimV} in batch and group mode, every layout pair`, () => {
      for (const [mode, fields] of Object.entries(MODES))
        for (const inputLayout of LAYOUTS)
          for (const outputLayout of LAYOUTS) {
            const c = checkFfpaProblem(problem({ ...fields, hdimQ, hdimV, inputLayout, outputLayout, mask: 't', lse: true }));
            expect(c.mode).toBe(mode);
            expect([c.hdimQ, c.hdimV]).toEqual([hdimQ, hdimV]);
            expect([c.inputLayout, c.outputLayout]).toEqual([inputLayout, outputLayout]);
            expect(c.numSplits).toBe(1);
            expect(c.splitKvAuto).toBe(false);
            expect(c.scoreModifier).toBeUndefined();
            expect(c.lse).toBe(true);
          }
    });

  it('hdimV defaults to the first pair of hdimQ: 576 for 576, d for every other d', () => {
    expect(checkFfpaProblem(problem({ hdimQ: 576 })).hdimV).toBe(576);
    for (const d of new Set(FFPA_HEAD_DIMS.map((p) => p.hdimQ))) expect(checkFfpaProblem(problem({ hdimQ: d })).hdimV).toBe(d);
  });

  it('splitKv 1 is accepted as absent is', () => {
    expect(checkFfpaProblem(problem({ splitKv: 1 })).numSplits).toBe(1);
  });
});

describe('checkFfpaProblem: typed errors naming the field and the rule', () => {
  it.each([
    [{ hdimQ: 256 }, 'problem.hdimQ', /problem\.hdimQ: must be one of 320, 384, .*, 1024 \(got 256\)/],
    [{ hdimQ: 1088 }, 'problem.hdimQ', /problem\.hdimQ: must be an integer in \[1, 1024\] \(got 1088\)/],
    [{ hdimQ: 330 }, 'problem.hdimQ', /problem\.hdimQ: must be one of 320, .*\(got 330\)/],
    [{ hdimQ: 512, hdimV: 448 }, 'problem.hdimV', /problem\.hdimV: must be 512 with hdimQ = 512 \(got 448\)/],
    [{ splitKv: 2 }, 'problem.splitKv', /problem\.splitKv: must be 1 or absent: FFPA runs in one pass/],
    [{ splitKv: 'auto' }, 'problem.splitKv', /problem\.splitKv: must be 1 or absent.*\(got "auto"\)/],
    [{ scoreModifier: 'softcap' }, 'problem.scoreModifier', /problem\.scoreModifier: must be absent: FFPA has no soft-capping/],
    [{ mask: 'g:3,4' }, 'problem.mask', /problem\.mask: must be a window mask or none/],
    // fp16 K rows of 516 elements: 1032 bytes, not a multiple of 16 (the head and batch strides are).
    [
      { kStrides: { row: 516, head: 80 * 516, batch: 2 * 80 * 516 } },
      'problem.kStrides.row',
      /problem\.kStrides\.row: times the element size \(2 bytes\) must be a multiple of 16 bytes/,
    ],
  ])('%j → %s', (over, argument, message) => {
    const e = rejection(() => checkFfpaProblem(problem(over)));
    expect(e.argument).toBe(argument);
    expect(e.problems.map((p) => p.argument)).toEqual([argument]);
    expect(e.message).toMatch(message);
  });

  it('a K row stride that is a multiple of 8 fp16 elements passes (the rule is the 16 bytes, not the padding)', () => {
    expect(checkFfpaProblem(problem({ kStrides: { row: 520, head: 80 * 520, batch: 2 * 80 * 520 } })).kStrides.row).toBe(520);
  });

  it.each([null, undefined, 5, 'problem', true])('a non-object problem (%j) → argument "problem"', (p) => {
    const e = rejection(() => checkFfpaProblem(p as unknown as FfpaProblem));
    expect(e.argument).toBe('problem');
    expect(e.message).toMatch(/^problem: must be an object/);
  });

  it('several broken fields give one error listing all of them, the first as argument', () => {
    const e = rejection(() => checkFfpaProblem(problem({ splitKv: 2, scoreModifier: 'softcap', dtype: 'fp32', hdimQ: 256 })));
    expect(e.problems.map((p) => p.argument)).toEqual(['problem.splitKv', 'problem.scoreModifier', 'problem.dtype', 'problem.hdimQ']);
    expect(e.argument).toBe('problem.splitKv');
    expect(e.message).toMatch(/^4 problems: problem\.splitKv: .*; problem\.scoreModifier: .*; problem\.dtype: .*; problem\.hdimQ: /);
  });

  it("the FFPA rules and the kernels' rules are reported together", () => {
    const kStrides = { row: 516, head: 80 * 516, batch: 2 * 80 * 516 };
    const e = rejection(() => checkFfpaProblem(problem({ splitKv: 'auto', mask: 'g:3,4', kStrides })));
    expect(e.problems.map((p) => p.argument)).toEqual(['problem.splitKv', 'problem.mask', 'problem.kStrides.row']);
  });
});

/** Marks a field left out of the problem. */
const ABSENT = Symbol('absent');

/** Mostly plausible values, sometimes implausible ones. */
function field(plausible: readonly unknown[], implausible: readonly unknown[]): fc.Arbitrary<unknown> {
  return fc.oneof({ weight: 12, arbitrary: fc.constantFrom(...plausible) }, { weight: 1, arbitrary: fc.constantFrom(...implausible) });
}

const BAD_NUMBERS = [0, -1, 1.5, Number.NaN, Infinity, 2 ** 53, '2', null, true, 1n, [], {}];

/** Random problems: a valid FFPA problem's fields, each sometimes replaced by something wrong. */
const fuzzProblems = fc
  .record({
    dtype: field(['fp16', 'bf16'], ['fp32', 'fp8', 16, null, ABSENT]),
    batch: field([1, 2, 3], [...BAD_NUMBERS, 65536, ABSENT]),
    heads: field(
      [
        [1, 1],
        [2, 1],
        [4, 2],
        [4, 4],
      ],
      [
        [3, 2],
        [2, 4],
        [0, 1],
        [1, 0],
        [-2, 1],
        ['4', 2],
        [ABSENT, 1],
        [4, ABSENT],
        [65536, 1],
      ],
    ),
    hdims: field(
      [...FFPA_HEAD_DIMS.map((p) => [p.hdimQ, p.hdimV]), [320, ABSENT], [576, ABSENT], [1024, ABSENT]],
      [
        [256, ABSENT],
        [1088, ABSENT],
        [330, 330],
        [512, 448],
        [576, 320],
        [ABSENT, 512],
        ['512', 512],
        [512.5, ABSENT],
        [Number.NaN, ABSENT],
        [1024, 2048],
      ],
    ),
    sequences: field(
      [
        { seqlenQ: 1, seqlenK: 40 },
        { seqlenQ: 37, seqlenK: 37 },
        { seqlenQ: 0, seqlenK: 5 },
        { seqstartQ: 'batch', seqstartK: 'batch' },
      ],
      [
        { seqlenQ: -1, seqlenK: 5 },
        { seqlenQ: 5, seqlenK: 1.5 },
        { seqlenQ: ABSENT, seqlenK: 5 },
        { seqlenQ: 2 ** 31, seqlenK: 5 },
        { seqlenQ: '5', seqlenK: 5 },
        { seqstartQ: [0, 5, 3], seqstartK: [0, 1, 2] },
        { seqstartQ: [1, 5], seqstartK: [0, 5] },
        { seqstartQ: [0, 5], seqstartK: ABSENT },
        { seqstartQ: 'batch', seqstartK: 'batch', seqlenK: [1, 2, 3, 4, 5] },
        { seqstartQ: [0, Number.NaN], seqstartK: [0, 1] },
        { seqstartQ: 'batch', seqstartK: 'batch', seqlenQ: 3 },
      ],
    ),
    inputLayout: field([ABSENT, 'bhsd', 'bshd'], ['bsdh', 'BHSD', 1, null]),
    outputLayout: field([ABSENT, 'bhsd', 'bshd'], ['sbhd', 0, {}]),
    kStrides: field([ABSENT], ['packed', { row: 516, head: 516, batch: 516 }, { row: -8, head: 1, batch: 1 }, { row: 1.5 }, null, 7]),
    oStrides: field([ABSENT], [{ row: 1, head: 1, batch: 1 }, { row: Number.NaN, head: 0, batch: 0 }, 'x']),
    mask: field(
      [ABSENT, '0', 't', 'b', 't:40,3', 'b:-1,33', 'xt:64', { kind: 'none' }],
      ['g:3,4', { kind: 'generic', y: 2, x: 3 }, 'x', 't:1', 't:a,b', 'q:1,2', 7, null, { kind: 'window' }, { kind: 'sliding' }],
    ),
    lse: field([ABSENT, true, false], ['yes', 1, 0, null]),
    scale: field([ABSENT, 0.125, 0.05], [0, -0.125, Number.NaN, Infinity, '0.1', 1e39, null]),
    splitKv: field([ABSENT, 1], [2, 'auto', 0, -1, 1.5, 'max', null]),
    scoreModifier: field([ABSENT], ['softcap', 'alibi', 'relu', 0, null]),
  })
  .map((r) => {
    const out: Record<string, unknown> = {};
    const put = (k: string, v: unknown) => {
      if (v !== ABSENT) out[k] = v;
    };
    const [nheadQ, nheadK] = r.heads as unknown[];
    const [hdimQ, hdimV] = r.hdims as unknown[];
    const batch = typeof r.batch === 'number' && Number.isInteger(r.batch) && r.batch > 0 && r.batch < 10 ? r.batch : 2;
    const starts = Array.from({ length: batch + 1 }, (_, i) => 7 * i);
    for (const [k, v] of Object.entries(r.sequences as Record<string, unknown>)) put(k, v === 'batch' ? starts : v);
    for (const [k, v] of Object.entries({ ...r, nheadQ, nheadK, hdimQ, hdimV, heads: ABSENT, hdims: ABSENT, sequences: ABSENT })) put(k, v);
    return out;
  });

describe('checkFfpaProblem: fuzz', () => {
  it('500 random problems either pass as valid FFPA problems or throw FmhaFwdArgumentError naming problem fields', () => {
    const outcome = { passed: 0, rejected: 0 };
    fc.assert(
      fc.property(fuzzProblems, (p) => {
        let checked;
        try {
          checked = checkFfpaProblem(p as unknown as FfpaProblem);
        } catch (e) {
          if (!(e instanceof FmhaFwdArgumentError)) throw new Error(`threw ${String(e)}, not an FmhaFwdArgumentError`, { cause: e });
          expect(e.problems.length).toBeGreaterThan(0);
          for (const x of e.problems) {
            expect(x.argument).toMatch(/^problem(\.|$)/);
            expect(x.rule).not.toBe('');
          }
          outcome.rejected++;
          return;
        }
        expect(FFPA_HEAD_DIMS).toContainEqual({ hdimQ: checked.hdimQ, hdimV: checked.hdimV });
        expect(checked.numSplits).toBe(1);
        expect(checked.splitKvAuto).toBe(false);
        expect(p['scoreModifier']).toBeUndefined();
        expect(checked.mask.kind).not.toBe('generic');
        outcome.passed++;
      }),
      { seed: SEED, numRuns: 500 },
    );
    console.log(`checkFfpaProblem fuzz: ${outcome.passed} passed, ${outcome.rejected} rejected with FmhaFwdArgumentError`);
    // Both outcomes must be exercised for the fuzz to mean anything.
    expect(outcome.passed).toBeGreaterThanOrEqual(50);
    expect(outcome.rejected).toBeGreaterThanOrEqual(50);
  });
});
