import { describe, expect, it } from 'vitest';
import type { SuiteCase } from './benchSuite.ts';
import { BROKEN_RELATIVE_RMS, judgeCase, ROUNDING_MODEL } from './judgeCase.ts';
import type { BaselineReply, PrepareReply } from './referenceProtocol.ts';

const c: SuiteCase = {
  name: 'c',
  params: {},
  reference: { op: 'gemm', params: {} },
  seed: 1,
  precision: { c: 'fp16' },
  errorBaselines: ['torch-a', 'torch-b'],
};
const reference = { c: { maxAbs: 8, rms: 2 } };
const ran = (maxAbs: number, rms: number): BaselineReply => ({
  ms: 1,
  msMin: 1,
  msMax: 1,
  reps: [1],
  launchesPerRep: 1,
  errors: { c: { maxAbs, rms } },
});
const prepared = (baselines: Record<string, BaselineReply>): PrepareReply => ({
  ok: true,
  inputs: { generator: 'g', seed: 1, tensors: {} },
  baselines,
  reference,
});
const checked = (maxAbs: number, rms: number) => ({ ok: true as const, errors: { c: { maxAbs, rms } }, reference });

describe('judgeCase', () => {
  it('takes the first sound baseline of the preference list; a broken one sets no tolerance and is judged invalid', () => {
    const broken = ran(10, 2 * BROKEN_RELATIVE_RMS * 2);
    const j = judgeCase(c, prepared({ 'torch-a': broken, 'torch-b': ran(4e-3, 1e-3) }), checked(7e-3, 1.5e-3));
    expect(j.against).toBe('torch-b');
    expect(j.valid).toBe(true);
    expect(j.baselines).toEqual({ 'torch-a': false, 'torch-b': true });
    expect(judgeCase(c, prepared({ 'torch-a': broken, 'torch-b': ran(4e-3, 1e-3) }), checked(1e-2, 1e-3)).valid).toBe(false);
  });

  it('falls back to the rounding model when no baseline ran, and names it', () => {
    const j = judgeCase(c, prepared({ 'torch-a': { error: 'no kernel' } }), checked(1e-6, 1e-6));
    expect(j.against).toBe(ROUNDING_MODEL);
    expect(j.valid).toBe(true);
    expect(judgeCase(c, prepared({}), checked(0.1, 0.01)).valid).toBe(false);
  });

  it('throws when the server did not check an output the case judges', () => {
    expect(() => judgeCase(c, prepared({}), { ok: true, errors: {}, reference })).toThrow(/output c/);
  });
});
