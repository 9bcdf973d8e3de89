import { describe, expect, it } from 'vitest';
import type { BaselineMeasurement } from '../benchResult.ts';
import type { BaselineReply } from '../referenceProtocol.ts';
import { errorStats, referenceStats } from './errorStats.ts';
import { pickErrorBaseline, roundingModelErrors, type ErrorBaselineCandidate } from './errorBaseline.ts';
import { normalBits } from './testing/normalBits.ts';
import { decodeBits, roundInPlace } from './testing/roundInPlace.ts';

const stats = (maxAbs: number, rms: number) => ({ maxAbs, rms });

describe('pickErrorBaseline', () => {
  const baselines: Record<string, ErrorBaselineCandidate> = {
    'torch-flash': { error: 'head dim 256 not supported' },
    'torch-cudnn': {},
    'torch-nan': { errors: { o: stats(NaN, NaN) } },
    'torch-empty': { errors: {} },
    'torch-efficient': { errors: { o: stats(1e-3, 1e-4) } },
    'torch-math': { errors: { o: stats(2e-3, 2e-4), lse: stats(1e-5, 1e-6) } },
  };

  it('takes the first baseline in preference order that ran with finite errors', () => {
    const order = ['missing', 'torch-flash', 'torch-cudnn', 'torch-nan', 'torch-empty', 'torch-efficient', 'torch-math'];
    expect(pickErrorBaseline(baselines, order)).toEqual({ name: 'torch-efficient', errors: { o: stats(1e-3, 1e-4) } });
    expect(pickErrorBaseline(baselines, ['torch-math', 'torch-efficient'])?.name).toBe('torch-math');
  });

  it('with outputs, takes only a baseline that measured every one of them', () => {
    expect(pickErrorBaseline(baselines, ['torch-efficient', 'torch-math'], ['o', 'lse'])?.name).toBe('torch-math');
  });

  it("reads the reference server's replies and the bench record's baselines alike", () => {
    const timing = { ms: 1, msMin: 1, msMax: 1, reps: [1, 1, 1], launchesPerRep: 10 };
    const replies: Record<string, BaselineReply> = {
      'torch-flash': { error: 'no' },
      'torch-cudnn': { ...timing, errors: { o: stats(1, 1) } },
    };
    const recorded: Record<string, BaselineMeasurement> = {
      'torch-flash': { ms: 1 },
      'torch-cudnn': { ms: 1, errors: { o: stats(2, 2) } },
    };
    expect(pickErrorBaseline(replies, ['torch-flash', 'torch-cudnn'])?.errors).toEqual({ o: stats(1, 1) });
    expect(pickErrorBaseline(recorded, ['torch-flash', 'torch-cudnn'])?.errors).toEqual({ o: stats(2, 2) });
  });

  it('gives undefined when none qualifies', () => {
    expect(pickErrorBaseline(baselines, ['torch-flash', 'torch-cudnn', 'torch-nan'])).toBeUndefined();
    expect(pickErrorBaseline(baselines, [])).toBeUndefined();
  });

  it('rejects malformed arguments by name', () => {
    expect(() => pickErrorBaseline(null as never, [])).toThrow(expect.objectContaining({ argument: 'baselines' }));
    expect(() => pickErrorBaseline({}, 'torch-flash' as never)).toThrow(expect.objectContaining({ argument: 'preference' }));
  });
});

describe('roundingModelErrors', () => {
  const reference = { o: stats(4, 1), dq: stats(2, 0.5) };

  it('is the error of rounding the reference once: u·max|ref| and u/√3·rms(ref), u = 2^−(p+1)', () => {
    expect(roundingModelErrors(reference, 'fp16')).toEqual({
      o: stats(4 * 2 ** -11, 2 ** -11 / Math.sqrt(3)),
      dq: stats(2 * 2 ** -11, (0.5 * 2 ** -11) / Math.sqrt(3)),
    });
    expect(roundingModelErrors({ o: stats(1, 1) }, 'bf16')).toEqual({ o: stats(2 ** -8, 2 ** -8 / Math.sqrt(3)) });
    expect(roundingModelErrors({ o: stats(1, 1) }, 'fp32')).toEqual({ o: stats(2 ** -24, 2 ** -24 / Math.sqrt(3)) });
    expect(roundingModelErrors(reference, 'exact')).toEqual({ o: stats(0, 0), dq: stats(0, 0) });
  });

  it('takes one precision per output', () => {
    expect(roundingModelErrors(reference, { o: 'bf16', dq: 'exact' })).toEqual({
      o: stats(4 * 2 ** -8, 2 ** -8 / Math.sqrt(3)),
      dq: stats(0, 0),
    });
  });

  it('bounds the measured error of rounding normal data (maxAbs always, rms by at most a third less)', () => {
    for (const dtype of ['fp16', 'bf16'] as const) {
      const want = decodeBits('fp16', normalBits('fp16', 20_000, 5)).map((x) => x * Math.PI);
      const measured = errorStats(roundInPlace(dtype, Float64Array.from(want)), want);
      const model = roundingModelErrors({ y: referenceStats(want) }, dtype)['y']!;
      expect(measured.maxAbs).toBeLessThanOrEqual(model.maxAbs);
      expect(measured.rms).toBeLessThanOrEqual(model.rms);
      expect(measured.rms).toBeGreaterThan((2 / 3) * model.rms);
    }
  });

  it('rejects an unknown precision naming it', () => {
    expect(() => roundingModelErrors(reference, 'fp8' as never)).toThrow(expect.objectContaining({ argument: 'precision' }));
    expect(() => roundingModelErrors(reference, { o: 'fp16' })).toThrow(expect.objectContaining({ argument: 'precision.dq' }));
  });
});
