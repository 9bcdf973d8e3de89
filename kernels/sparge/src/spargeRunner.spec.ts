import { FmhaFwdArgumentError } from '@tilekit/fmha';
import { describe, expect, it } from 'vitest';
import { SpargeArgumentError } from './spargeArgumentError.ts';
import { planSparge, type SpargeProblem } from './spargeRunner.ts';

const base: SpargeProblem = { dtype: 'fp16', batch: 2, nheadQ: 4, hdimQ: 128, seqlenQ: 1000, seqlenK: 1000, params: { topk: 0.4 } };

function argumentOf(problem: SpargeProblem): string | undefined {
  try {
    planSparge(problem);
  } catch (e) {
    if (e instanceof SpargeArgumentError || e instanceof FmhaFwdArgumentError) return e.argument;
    throw e;
  }
  return undefined;
}

describe('planSparge', () => {
  it('plans the block grid with the kernels’ 128-row tiles and picks the instance of the choices', () => {
    const plan = planSparge(base);
    expect(plan.attention.qBlocks).toBe(8);
    expect(plan.attention.kBlocks).toBe(8);
    expect(plan.instance.policy).toMatchObject({ pipeline: 'vsa', dtype: 'fp16', headDim: 128, mask: 'none' });
    expect(plan.instance.policy.pvGate).toBeUndefined();
    expect(plan.instance.policy.qkOperand).toBeUndefined();
    expect(plan.denseBlocks).toBe(2 * 4 * 64);
    const causal = planSparge({ ...base, params: { topk: 0.4, isCausal: true, int8: true }, pipeline: 'jenga', pvMode: 'warp' });
    expect(causal.instance.policy).toMatchObject({
      pipeline: 'jenga',
      mask: 'window',
      pvGate: { tag: 'pvskip' },
      qkOperand: { tag: 'int8' },
    });
    // Causal: the blocks a top-left causal mask lets some query see (8 rows, 1 + 2 + … + 8).
    expect(causal.denseBlocks).toBe(2 * 4 * 36);
  });

  it('group mode sizes the grid by the longest sequence', () => {
    const { seqlenQ: _q, seqlenK: _k, ...shape } = base;
    const plan = planSparge({ ...shape, batch: 3, seqstartQ: [0, 17, 276, 1276], seqstartK: [0, 17, 276, 1276] });
    expect(plan.attention.qBlocks).toBe(8);
    expect(plan.denseBlocks).toBe(4 * (1 + 9 + 64));
  });

  it('rejects bad hyperparameters and choices with typed errors naming them', () => {
    expect(argumentOf({ ...base, params: { topk: 1.5 } })).toBe('topk');
    expect(argumentOf({ ...base, params: { topk: 0.4, cdfthreshd: 0.9 } })).toBe('topk/cdfthreshd');
    expect(argumentOf({ ...base, params: {} })).toBe('topk/cdfthreshd');
    expect(argumentOf({ ...base, params: { topk: [0.1, 0.2] } })).toBe('topk');
    expect(argumentOf({ ...base, params: { cdfthreshd: 0.9, simthreshd1: [0.1, 0.2, 0.3, Number.NaN] } })).toBe('simthreshd1[3]');
    expect(argumentOf({ ...base, hdimQ: 96 })).toBe('headDim');
    expect(argumentOf({ ...base, params: { topk: 0.4, blockK: 64 } })).toBe('params.blockK');
    expect(argumentOf({ ...base, pipeline: 'dense' as never })).toBe('pipeline');
    expect(argumentOf({ ...base, pvMode: 'row' as never })).toBe('pvMode');
    expect(argumentOf({ ...base, nheadK: 3 })).toMatch(/nheadK/);
    expect(argumentOf({ ...base, lse: true, params: { topk: 0.4, int8: true } })).toBe('lse');
    expect(argumentOf({ ...base, lse: true, params: { topk: 0.4, int8: true, smoothK: false } })).toBeUndefined();
  });
});
