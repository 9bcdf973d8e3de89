import { describe, expect, it } from 'vitest';
import { errorFloor, judgeOutput, judgeOutputs, type OutputEvidence } from './judgeOutputs.ts';
import { attentionBwdCase } from './testing/attentionBwdCase.ts';
import { attentionFwdCase, type AttentionFwdCase } from './testing/attentionFwdCase.ts';
import { causalKeys, type AttentionShape } from './testing/attentionShape.ts';
import { once } from './testing/once.ts';
import { roundInPlace } from './testing/roundInPlace.ts';

const stats = (maxAbs: number, rms: number) => ({ maxAbs, rms });
const evidence = (ours: [number, number], precision: OutputEvidence['precision'] = 'fp16'): OutputEvidence => ({
  ours: stats(...ours),
  torch: stats(1e-3, 1e-4),
  reference: stats(4, 1),
  precision,
});

describe('judgeOutput', () => {
  it('limits each statistic to 2·torch + 2^−(p+2)·reference', () => {
    expect(errorFloor('fp16')).toBe(2 ** -12);
    expect(errorFloor('bf16')).toBe(2 ** -9);
    expect(errorFloor('fp32')).toBe(2 ** -25);
    for (const p of ['fp16', 'bf16', 'fp32'] as const) {
      const limit = stats(2e-3 + 4 * errorFloor(p), 2e-4 + errorFloor(p));
      expect(judgeOutput(evidence([0, 0], p)).limit).toEqual(limit);
      expect(judgeOutput(evidence([limit.maxAbs, limit.rms], p))).toEqual({ ok: true, limit, reason: 'within the limit' });
    }
  });

  it('fails when either statistic is over the limit, naming it', () => {
    const { limit } = judgeOutput(evidence([0, 0]));
    const rmsOver = judgeOutput(evidence([0, limit.rms * 1.001]));
    expect(rmsOver.ok).toBe(false);
    expect(rmsOver.reason).toMatch(/^rms .* > limit /);
    const maxOver = judgeOutput(evidence([limit.maxAbs * 1.001, 0]));
    expect(maxOver.ok).toBe(false);
    expect(maxOver.reason).toMatch(/^maxAbs .* > limit [^;]*$/);
    expect(judgeOutput(evidence([1, 1])).reason).toMatch(/^maxAbs .*; rms /);
  });

  it('judges exact outputs bit-exact whatever torch did', () => {
    const exact = { ...evidence([0, 0], 'exact'), torch: stats(Infinity, Infinity) };
    expect(judgeOutput(exact)).toEqual({ ok: true, limit: stats(0, 0), reason: 'within the limit' });
    expect(judgeOutput({ ...exact, ours: stats(2 ** -24, 1e-9) }).ok).toBe(false);
  });

  it('fails a non-finite output, and judges nothing against a non-finite limit', () => {
    for (const bad of [Infinity, NaN]) {
      expect(judgeOutput(evidence([bad, bad]))).toMatchObject({ ok: false, reason: 'our output is not finite (NaN or Inf)' });
      expect(judgeOutput({ ...evidence([0, 0]), torch: stats(bad, bad) })).toMatchObject({
        ok: false,
        reason: expect.stringMatching(/^no finite limit/),
      });
    }
  });

  it('rejects malformed evidence naming the field', () => {
    expect(() => judgeOutput(evidence([-1, 0]))).toThrow(expect.objectContaining({ argument: 'evidence.ours.maxAbs' }));
    expect(() => judgeOutput({ ...evidence([0, 0]), torch: { maxAbs: 0 } as never })).toThrow(
      expect.objectContaining({ argument: 'evidence.torch.rms' }),
    );
    expect(() => judgeOutput({ ...evidence([0, 0]), precision: 'fp8' as never })).toThrow(
      expect.objectContaining({ argument: 'evidence.precision' }),
    );
    expect(() => judgeOutputs({ dq: { ...evidence([0, 0]), reference: null as never } })).toThrow(
      expect.objectContaining({ argument: 'evidence.dq.reference' }),
    );
  });
});

describe('judgeOutputs', () => {
  it('is valid only when every output is ok and there is one at least, one summary line each', () => {
    const verdict = judgeOutputs({ dq: evidence([1e-4, 1e-5]), dk: evidence([1, 1]) });
    expect(verdict.valid).toBe(false);
    expect(verdict.outputs['dq']).toMatchObject({ ok: true, precision: 'fp16', ours: stats(1e-4, 1e-5) });
    expect(verdict.outputs['dk']!.ok).toBe(false);
    expect(verdict.summary.split('\n')).toEqual([
      'dq ok maxAbs 1.00e-4/2.98e-3, rms 1.00e-5/4.44e-4 (fp16)',
      'dk FAIL maxAbs 1.00e+0/2.98e-3, rms 1.00e+0/4.44e-4 (fp16)',
    ]);
    expect(judgeOutputs({ dq: evidence([1e-4, 1e-5]) }).valid).toBe(true);
    expect(judgeOutputs({})).toEqual({ valid: false, outputs: {}, summary: 'no outputs to judge' });
  });
});

// Synthetic attention on the CPU: the fp32 reference is @tilekit/fmha's CPU reference; "torch" is a
// low-precision model (P, and dS in the backward, narrowed to the dtype; outputs rounded), whose
// error sets the limit; "ours" is an independent correct model (tiles of 128 keys through the
// online softmax in exp2, fp32 tile sums) that must pass, and the bugs below are made from it.
const FWD: AttentionShape = { heads: 2, sq: 250, sk: 1000, d: 64, scale: 1 / 8 }; // 8 key tiles, the last of 104 keys
const CAUSAL: AttentionShape = { heads: 2, sq: 500, sk: 500, d: 64, scale: 1 / 8 };
const BWD: AttentionShape = { heads: 2, sq: 200, sk: 200, d: 64, scale: 1 / 8 };

const judgeO = (c: AttentionFwdCase, o: ArrayLike<number>) => judgeOutputs({ o: c.evidence(o) });

describe.each(['fp16', 'bf16'] as const)('synthetic attention in %s', (dtype) => {
  const fwd = once(() => attentionFwdCase(dtype, FWD, false, 16));
  const causal = once(() => attentionFwdCase(dtype, CAUSAL, true, 160));
  const bwd = once(() => attentionBwdCase(dtype, BWD, 1600));

  it('accepts torch itself and an independent correct kernel, with and without the causal mask', () => {
    for (const c of [fwd(), causal()]) {
      expect(judgeO(c, c.torch()).valid).toBe(true);
      const verdict = judgeO(c, c.ours());
      expect(verdict.valid, verdict.summary).toBe(true);
    }
  });

  it('rejects one dropped key tile of 128 keys', () => {
    for (const tile of [0, 3]) expect(judgeO(fwd(), fwd().oursWith(undefined, tile)).valid).toBe(false);
  });

  it('rejects two swapped heads', () => {
    const o = fwd().ours();
    const half = o.length / 2;
    const swapped = new Float64Array(o.length);
    swapped.set(o.subarray(half), 0);
    swapped.set(o.subarray(0, half), half);
    expect(judgeO(fwd(), swapped).valid).toBe(false);
  });

  it.each([
    ['excludes the diagonal', -1],
    ['includes one extra key', 1],
  ])('rejects a causal mask that %s', (_, offBy) => {
    expect(judgeO(causal(), causal().oursWith(causalKeys(CAUSAL.sk, offBy))).valid).toBe(false);
  });

  it('rejects a 1% scale error on O', () => {
    for (const c of [fwd(), causal()])
      for (const factor of [1.01, 0.99]) {
        const verdict = judgeO(
          c,
          roundInPlace(
            dtype,
            c.ours().map((x) => x * factor),
          ),
        );
        expect(verdict.valid).toBe(false);
        expect(verdict.outputs['o']!.reason).toMatch(/rms/);
      }
  });

  it('accepts a correct backward', () => {
    const b = bwd();
    expect(judgeOutputs(b.evidence(b.torch)).valid).toBe(true);
    const verdict = judgeOutputs(b.evidence(b.ours));
    expect(verdict.valid, verdict.summary).toBe(true);
  });

  it('rejects a zeroed dK (and only dK)', () => {
    const b = bwd();
    const verdict = judgeOutputs(b.evidence({ ...b.ours, dk: new Float64Array(b.ours.dk.length) }));
    expect(verdict.valid).toBe(false);
    expect([verdict.outputs['dq']!.ok, verdict.outputs['dk']!.ok, verdict.outputs['dv']!.ok]).toEqual([true, false, true]);
  });
});
