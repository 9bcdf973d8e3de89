import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SpargeArgumentError } from './spargeArgumentError.ts';
import { SPARGE_DEFAULTS, checkSpargeParams, spargeTopkCount } from './spargeHyperparameters.ts';

const ctx = { nhead: 4, headDim: 128 };

function argumentOf(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(SpargeArgumentError);
    return (e as SpargeArgumentError).argument;
  }
  throw new Error('expected a SpargeArgumentError');
}

describe('checkSpargeParams', () => {
  it('fills the upstream defaults and expands scalars per head', () => {
    const p = checkSpargeParams({ topk: 0.5 }, ctx);
    expect(p.selection).toBe('topk');
    expect(p.selectionValue).toEqual([0.5, 0.5, 0.5, 0.5]);
    expect(p.simthreshd1).toEqual([-0.1, -0.1, -0.1, -0.1]);
    expect(p.pvThreshold).toEqual([50, 50, 50, 50]);
    expect([p.blockQ, p.blockK, p.smoothK, p.attentionSink, p.isCausal, p.int8, p.tailBlockRule]).toEqual([
      128,
      64,
      true,
      true,
      false,
      false,
      'pooled',
    ]);
    const c = checkSpargeParams({ cdfthreshd: [0.9, 0.95, 0.97, 1], pvThreshold: Infinity, blockQ: 64, blockK: 128 }, ctx);
    expect(c.selection).toBe('cdf');
    expect(c.selectionValue).toEqual([0.9, 0.95, 0.97, 1]);
    expect(c.simthreshd1[0]).toBe(SPARGE_DEFAULTS.simthreshd1WithCdf);
    expect(c.pvThreshold[3]).toBe(Infinity);
    expect([c.blockQ, c.blockK]).toEqual([64, 128]);
  });

  it('accepts per-head typed arrays', () => {
    expect(checkSpargeParams({ topk: new Float32Array([0.25, 0.5, 0.75, 1]), simthreshd1: [0.1, 0.2, 0.3, 0.4] }, ctx).simthreshd1).toEqual(
      [0.1, 0.2, 0.3, 0.4],
    );
  });

  it('accepts exactly the topk values in (0, 1]', () => {
    fc.assert(
      fc.property(fc.double({ min: -2, max: 2, noNaN: true }), (topk) => {
        const ok = topk > 0 && topk <= 1;
        if (ok) expect(checkSpargeParams({ topk }, ctx).selectionValue[0]).toBe(topk);
        else expect(argumentOf(() => checkSpargeParams({ topk }, ctx))).toBe('topk');
      }),
    );
  });

  it('names the argument and the rule of every broken rule', () => {
    expect(argumentOf(() => checkSpargeParams({}, ctx))).toBe('topk/cdfthreshd');
    expect(argumentOf(() => checkSpargeParams({ topk: 0.5, cdfthreshd: 0.9 }, ctx))).toBe('topk/cdfthreshd');
    expect(argumentOf(() => checkSpargeParams({ topk: 0 }, ctx))).toBe('topk');
    expect(argumentOf(() => checkSpargeParams({ topk: 1.5 }, ctx))).toBe('topk');
    expect(argumentOf(() => checkSpargeParams({ topk: NaN }, ctx))).toBe('topk');
    expect(argumentOf(() => checkSpargeParams({ topk: [0.5, 0.5, 2, 0.5] }, ctx))).toBe('topk[2]');
    expect(argumentOf(() => checkSpargeParams({ topk: [0.5, 0.5] }, ctx))).toBe('topk');
    expect(argumentOf(() => checkSpargeParams({ cdfthreshd: -0.1 }, ctx))).toBe('cdfthreshd');
    expect(argumentOf(() => checkSpargeParams({ topk: 0.5, simthreshd1: [0, 0, 0] }, ctx))).toBe('simthreshd1');
    expect(argumentOf(() => checkSpargeParams({ topk: 0.5, simthreshd1: Infinity }, ctx))).toBe('simthreshd1');
    expect(argumentOf(() => checkSpargeParams({ topk: 0.5, pvThreshold: -1 }, ctx))).toBe('pvThreshold');
    expect(argumentOf(() => checkSpargeParams({ topk: 0.5, pvThreshold: [1, 2, NaN, 4] }, ctx))).toBe('pvThreshold[2]');
    expect(argumentOf(() => checkSpargeParams({ topk: 0.5 }, { nhead: 4, headDim: 96 }))).toBe('headDim');
    expect(argumentOf(() => checkSpargeParams({ topk: 0.5 }, { nhead: 0, headDim: 64 }))).toBe('nhead');
    expect(argumentOf(() => checkSpargeParams({ topk: 0.5, blockQ: 100 }, ctx))).toBe('blockQ');
    expect(argumentOf(() => checkSpargeParams({ topk: 0.5, blockK: 512 }, ctx))).toBe('blockK');
    expect(argumentOf(() => checkSpargeParams({ topk: 0.5, smoothK: 1 as unknown as boolean }, ctx))).toBe('smoothK');
    expect(argumentOf(() => checkSpargeParams({ topk: 0.5, tailBlockRule: 'nan' as 'pooled' }, ctx))).toBe('tailBlockRule');
    expect(() => checkSpargeParams({ topk: 2 }, ctx)).toThrow(/topk: must be in \(0, 1\] \(got 2\)/);
  });
});

describe('spargeTopkCount', () => {
  it('is upstream int(topk·nK), promoted to at least 1', () => {
    expect(spargeTopkCount(0.5, 16)).toBe(8);
    expect(spargeTopkCount(0.4, 256)).toBe(102);
    expect(spargeTopkCount(0.1, 5)).toBe(1);
    expect(spargeTopkCount(1, 7)).toBe(7);
    fc.assert(
      fc.property(fc.double({ min: Number.MIN_VALUE, max: 1, noNaN: true }), fc.integer({ min: 1, max: 4096 }), (topk, n) => {
        const count = spargeTopkCount(topk, n);
        expect(count).toBe(Math.max(1, Math.trunc(topk * n)));
        expect(count).toBeGreaterThanOrEqual(1);
        expect(count).toBeLessThanOrEqual(n);
      }),
    );
  });
});
