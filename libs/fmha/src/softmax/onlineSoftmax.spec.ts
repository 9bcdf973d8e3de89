import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ONLINE_SOFTMAX_EMPTY, onlineSoftmaxFinalize, onlineSoftmaxUpdate, type OnlineSoftmaxState } from './onlineSoftmax.ts';

const score = fc.oneof(
  { weight: 5, arbitrary: fc.double({ min: -30, max: 30, noNaN: true }) },
  { weight: 1, arbitrary: fc.constant(-Infinity) },
);

/** Runs the online algorithm over `chunks`, accumulating o = Σ p·v, then normalizes. */
function online(chunks: number[][], values: number[][], scaleLog2: number): { o: number; lse: number; state: OnlineSoftmaxState } {
  let state = ONLINE_SOFTMAX_EMPTY;
  let o = 0;
  chunks.forEach((c, k) => {
    const step = onlineSoftmaxUpdate(state, c, scaleLog2);
    o = o * step.correction + step.p.reduce((a, p, j) => a + p * values[k]![j]!, 0);
    state = step.state;
  });
  const f = onlineSoftmaxFinalize(state);
  return { o: o * f.inverseSum, lse: f.lse, state };
}

describe('online softmax (exp2 domain)', () => {
  it('update == recompute: any chunking gives the one-shot softmax-weighted sum and LSE', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.tuple(score, fc.double({ min: -4, max: 4, noNaN: true })), { minLength: 0, maxLength: 9 }), {
          minLength: 1,
          maxLength: 6,
        }),
        fc.double({ min: 0.01, max: 3, noNaN: true }),
        (chunked, scale) => {
          const chunks = chunked.map((c) => c.map(([s]) => s));
          const values = chunked.map((c) => c.map(([, v]) => v));
          const all = chunks.flat();
          const vs = values.flat();
          const scaleLog2 = scale * Math.LOG2E;
          const got = online(chunks, values, scaleLog2);
          // The direct formula in the natural-log domain.
          const mx = Math.max(...all.map((s) => s * scale), -Infinity);
          if (mx === -Infinity) {
            expect(got.o).toBe(0);
            expect(got.lse).toBe(-Infinity);
            return;
          }
          const w = all.map((s) => Math.exp(s * scale - mx));
          const z = w.reduce((a, b) => a + b, 0);
          const o = w.reduce((a, wi, j) => a + wi * vs[j]!, 0) / z;
          expect(got.o).toBeCloseTo(o, 9);
          expect(got.lse).toBeCloseTo(mx + Math.log(z), 9);
        },
      ),
    );
  });

  it('a fully masked row stays m = −∞, l = 0 and finalizes to O = 0, LSE = −∞ (no NaN)', () => {
    const r = online([[-Infinity, -Infinity], [-Infinity]], [[1, 2], [3]], 1.4);
    expect(r.state).toEqual({ m: -Infinity, l: 0 });
    expect(r.o).toBe(0);
    expect(r.lse).toBe(-Infinity);
  });

  it('masked chunks before and after live ones change nothing', () => {
    const a = online([[1, 2, 3]], [[1, -1, 2]], 1);
    const b = online([[-Infinity], [1, 2], [-Infinity, 3]], [[9], [1, -1], [9, 2]], 1);
    expect(b.o).toBeCloseTo(a.o, 12);
    expect(b.lse).toBeCloseTo(a.lse, 12);
  });
});
