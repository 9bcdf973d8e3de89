import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SpargeArgumentError } from '../spargeArgumentError.ts';
import { checkSpargeParams } from '../spargeHyperparameters.ts';
import { resolveSpargeShape } from '../spargeShape.ts';
import { checkSpargeSelectConfig } from './spargeSelectLauncher.ts';
import { checkSpargePoolProblem, type SpargePoolProblem } from './spargePoolProblem.ts';

/** The arguments of every problem `run` is rejected for (empty when it is accepted). */
function problemArguments(run: () => unknown): string[] {
  try {
    run();
  } catch (e) {
    expect(e).toBeInstanceOf(SpargeArgumentError);
    const err = e as SpargeArgumentError;
    expect(err.argument).toBe(err.problems[0]!.argument);
    return err.problems.map((x) => x.argument);
  }
  return [];
}

describe('checkSpargePoolProblem', () => {
  it('reports every independent violation in one error: k violations give k problems (fast-check)', () => {
    const base = { dtype: 'fp16', headDim: 128, batch: 2, nhead: 4, nheadK: 2, blockQ: 128, blockK: 64, seqlenQ: 259, seqlenK: 1000 };
    // [argument, change, the arguments whose violation skips this check (it compares against them)]
    const violations: readonly (readonly [string, Record<string, unknown>, readonly string[]])[] = [
      ['problem.dtype', { dtype: 'fp32' }, []],
      ['problem.headDim', { headDim: 96 }, []],
      ['problem.blockQ', { blockQ: 32 }, []],
      ['problem.blockK', { blockK: 100 }, []],
      ['problem.batch', { batch: 0 }, []],
      ['problem.nhead', { nhead: 0 }, []],
      ['problem.nheadK', { nheadK: 3 }, ['problem.nhead']],
      ['problem.seqlenQ', { seqlenQ: 0 }, []],
      ['problem.seqlenK', { seqlenK: -1 }, []],
      ['problem.qStrides.row', { qStrides: { row: 132, head: 0, batch: 0 } }, []],
      ['problem.kStrides.head', { kStrides: { row: 128, head: 4, batch: 0 } }, []],
      ['problem.smoothK', { smoothK: 1 }, []],
      ['problem.int8', { int8: 'yes' }, []],
      ['problem.tailBlockRule', { tailBlockRule: 'nan' }, []],
    ];
    fc.assert(
      fc.property(fc.subarray([...violations]), (chosen) => {
        const broken = new Set(chosen.map(([argument]) => argument));
        const expected = chosen.filter(([, , needs]) => needs.every((n) => !broken.has(n))).map(([argument]) => argument);
        const p = Object.assign({}, base, ...chosen.map(([, change]) => change)) as SpargePoolProblem;
        expect(problemArguments(() => checkSpargePoolProblem(p))).toEqual(expected);
      }),
    );
  });

  it('group mode: every broken offset of both starts, and stray seqlens, in one error', () => {
    const common = { dtype: 'fp16', headDim: 128, batch: 2, nhead: 4, blockQ: 128, blockK: 64 } as const;
    expect(problemArguments(() => checkSpargePoolProblem({ ...common, seqlenQ: 5, seqstartQ: [1, 5, 3], seqstartK: [0, -1, 2] }))).toEqual([
      'problem.seqlenQ',
      'problem.seqstartQ[0]',
      'problem.seqstartQ[2]',
      'problem.seqstartK[1]',
    ]);
  });
});

describe('the other Sparge validators collect too', () => {
  it('resolveSpargeShape, checkSpargeParams and checkSpargeSelectConfig list every problem', () => {
    expect(problemArguments(() => resolveSpargeShape({ batch: 0, nhead: 4, nheadK: 3, seqlenQ: 1, seqlenK: 0, headDim: 96 }))).toEqual([
      'shape.batch',
      'shape.nheadK',
      'shape.seqlenK',
      'shape.headDim',
    ]);
    expect(
      problemArguments(() =>
        checkSpargeParams({ topk: [0.5, 2, 0.5, -1], pvThreshold: -1, blockQ: 100, smoothK: 1 as never }, { nhead: 4, headDim: 64 }),
      ),
    ).toEqual(['topk[1]', 'topk[3]', 'pvThreshold', 'smoothK', 'blockQ']);
    expect(problemArguments(() => checkSpargeParams({}, { nhead: 0, headDim: 96 }))).toEqual(['nhead', 'headDim', 'topk/cdfthreshd']);
    const config = {
      batch: 1,
      nhead: 4,
      nheadK: 3,
      headDim: 96,
      blockQ: 128,
      blockK: 64,
      seqlenQ: -1,
      seqlenK: 10,
      selection: 'top',
      isCausal: false,
      attentionSink: 0,
    };
    expect(problemArguments(() => checkSpargeSelectConfig(config as never))).toEqual([
      'nheadK',
      'headDim',
      'seqlenQ',
      'selection',
      'attentionSink',
    ]);
  });
});
