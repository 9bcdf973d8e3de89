import fc from 'fast-check';
import { ArgumentError } from '@tilekit/numeric';
import { describe, expect, it } from 'vitest';
import { checkErr } from './checkErr.ts';
import { HostTensor } from './hostTensor.ts';
import { applyViewChain, hostTensorArb, viewChainArb } from './testing/index.ts';

const ref = () =>
  HostTensor.fromValues(
    'fp32',
    [2, 2, 5],
    Array.from({ length: 20 }, (_, i) => i / 4),
  );

describe('checkErr', () => {
  it('golden: passing check, one-line message', () => {
    const out = ref();
    out.set([1, 0, 3], out.get([1, 0, 3]) + 1e-6);
    const r = checkErr(out, ref(), { rtol: 1e-3, atol: 1e-3 });
    expect(r).toMatchObject({ ok: true, total: 20, failures: 0, nanInfMismatches: 0, worstIndex: [1, 0, 3], reported: [] });
    expect(r.maxAbsErr).toBe(Math.fround(13 / 4 + 1e-6) - 13 / 4);
    expect(r.message).toBe(
      'ok: 20 elements within rtol 0.001, atol 0.001; max abs err 9.537e-7 at [1,0,3] (out 3.25, ref 3.25), max rel err 2.934e-7',
    );
  });

  it('golden: failures, NaN/Inf mismatches and the first failing elements', () => {
    const out = ref();
    out.set([0, 0, 1], Number.NaN);
    out.set([0, 1, 2], 2.01); // ref 1.75: err 0.26
    out.set([1, 1, 4], Number.POSITIVE_INFINITY);
    out.set([1, 0, 0], 2.5 + 0.003); // within 0.001 + 0.001·2.5 = 0.0035
    const r = checkErr(out, ref(), { rtol: 1e-3, atol: 1e-3, label: 'o' });
    expect(r).toMatchObject({ ok: false, total: 20, failures: 3, nanInfMismatches: 2, worstIndex: [0, 1, 2] });
    expect(r.reported).toEqual([
      { index: [0, 0, 1], out: Number.NaN, ref: 0.25 },
      { index: [0, 1, 2], out: Math.fround(2.01), ref: 1.75 },
      { index: [1, 1, 4], out: Number.POSITIVE_INFINITY, ref: 4.75 },
    ]);
    expect(r.message).toBe(
      'o: out of 20 elements, 3 fail (rtol 0.001, atol 0.001): max abs err 0.26 at [0,1,2] (out 2.01, ref 1.75), max rel err 0.1486; ' +
        '2 NaN/Inf mismatches; first: [0,0,1] out NaN ref 0.25, [0,1,2] out 2.01 ref 1.75, [1,1,4] out Infinity ref 4.75',
    );
    expect(r.message).not.toContain('\n');
    expect(checkErr(out, ref(), { rtol: 1e-3, atol: 1e-3, maxReport: 1 }).reported).toHaveLength(1);
  });

  it('NaN matches NaN, equal infinities match, opposite infinities do not', () => {
    const a = HostTensor.fromValues('fp32', [4], [Number.NaN, Infinity, -Infinity, 1]);
    expect(checkErr(a, a).ok).toBe(true);
    const b = HostTensor.fromValues('fp32', [4], [Number.NaN, -Infinity, -Infinity, Number.NaN]);
    expect(checkErr(a, b)).toMatchObject({ ok: false, failures: 2, nanInfMismatches: 2, maxAbsErr: 0, worstIndex: null });
  });

  it('default tolerance comes from the dtype (fp16: 1e-3 / 1e-3; int: exact)', () => {
    const r16 = HostTensor.fromValues('fp16', [2], [1, 2]);
    const o16 = HostTensor.fromValues('fp16', [2], [1.001, 2]);
    expect(checkErr(o16, r16)).toMatchObject({ ok: true, rtol: 1e-3, atol: 1e-3 });
    expect(checkErr(o16, r16, { dtype: 'fp32' })).toMatchObject({ ok: false, rtol: 1e-5, atol: 3e-6 });
    const i = HostTensor.fromValues('int32', [2], [1, 2]);
    expect(checkErr(HostTensor.fromValues('int32', [2], [1, 3]), i)).toMatchObject({ ok: false, failures: 1, rtol: 0, atol: 0 });
  });

  it('mixes dtypes and plain arrays (a fp16 result against a float64 reference)', () => {
    const out = HostTensor.fromValues('fp16', [2, 2], [0.1, 0.2, 0.3, 0.4]);
    const r = checkErr(out, [0.1, 0.2, 0.3, 0.4]);
    expect(r.ok).toBe(true);
    expect(r.worstIndex).toEqual([1, 1]); // fp16(0.4) is off by 9.8e-5, the others by less
    expect(checkErr([1, 2], [1, 2.5], { rtol: 0, atol: 0.1 })).toMatchObject({ ok: false, worstIndex: [1] });
  });

  it('comparing any tensor (or view) with itself is ok with zero error', () => {
    fc.assert(
      fc.property(hostTensorArb('bf16', { minLength: 0 }), viewChainArb(), (base, steps) => {
        const { view } = applyViewChain(base, steps);
        const r = checkErr(view, view.contiguous());
        expect([r.ok, r.failures, r.maxAbsErr, r.total]).toEqual([true, 0, 0, view.size]);
      }),
    );
  });

  it('ok ⇔ every element passes |out − ref| <= atol + rtol·|ref|', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.double({ min: -10, max: 10, noNaN: true }), fc.double({ min: -10, max: 10, noNaN: true })), {
          minLength: 1,
          maxLength: 30,
        }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (pairs, rtol, atol) => {
          const r = checkErr(
            pairs.map(([o]) => o),
            pairs.map(([, x]) => x),
            { rtol, atol },
          );
          const failing = pairs.filter(([o, x]) => Math.abs(o - x) > atol + rtol * Math.abs(x)).length;
          expect([r.ok, r.failures]).toEqual([failing === 0, failing]);
        },
      ),
    );
  });

  it('rejects mismatched shapes and bad tolerances', () => {
    const a = HostTensor.empty('fp32', [2, 3]);
    expect(() => checkErr(a, HostTensor.empty('fp32', [3, 2]))).toThrow('checkErr: out shape [2,3] must equal ref shape [3,2]');
    expect(() => checkErr(a, [1, 2])).toThrow('checkErr: out has 6 elements but ref has 2');
    expect(() => checkErr(a, a, { rtol: -1 })).toThrow('checkErr: rtol must be finite and non-negative (got -1)');
    expect(() => checkErr(a, a, { maxReport: 1.5 })).toThrow(ArgumentError);
  });
});
