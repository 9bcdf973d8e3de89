import fc from 'fast-check';
import { ArgumentError } from '@tilekit/numeric';
import { describe, expect, it } from 'vitest';
import type { AttentionFwdArgs } from './attentionFwdArgs.ts';
import { attentionScoreAt, type AttentionScoreModifier } from './attentionScoreModifier.ts';
import { packedAttentionStrides } from './attentionTensorLayout.ts';
import { naiveAttentionFwd } from './naiveAttentionFwd.ts';
import { referenceAttentionBwd } from './referenceAttentionBwd.ts';
import { referenceAttentionFwd } from './referenceAttentionFwd.ts';
import { attentionMaskArb, attentionTestHash, attentionTestOperand } from './testing/attentionTestTensors.ts';

interface Case {
  readonly nheadK: number;
  readonly ratio: number;
  readonly sq: number;
  readonly sk: number;
  readonly d: number;
  readonly mod: AttentionScoreModifier;
  readonly mask: AttentionFwdArgs['mask'];
  readonly seed: number;
}

const modArb = (nheadQ: number): fc.Arbitrary<AttentionScoreModifier> =>
  fc.oneof(
    fc.double({ min: 0.25, max: 8, noNaN: true }).map((cap) => ({ kind: 'softcap' as const, cap })),
    fc
      .array(fc.double({ min: -1, max: 1, noNaN: true }), { minLength: nheadQ, maxLength: nheadQ })
      .map((slopes) => ({ kind: 'alibi' as const, slopes })),
  );

const caseArb: fc.Arbitrary<Case> = fc
  .record({
    nheadK: fc.integer({ min: 1, max: 2 }),
    ratio: fc.constantFrom(1, 2),
    sq: fc.integer({ min: 0, max: 6 }),
    sk: fc.integer({ min: 0, max: 6 }),
  })
  .chain((s) =>
    fc.record({
      nheadK: fc.constant(s.nheadK),
      ratio: fc.constant(s.ratio),
      sq: fc.constant(s.sq),
      sk: fc.constant(s.sk),
      d: fc.integer({ min: 1, max: 4 }),
      mod: modArb(s.nheadK * s.ratio),
      mask: attentionMaskArb(3),
      seed: fc.integer({ min: 0, max: 2 ** 30 }),
    }),
  );

/** Batch-mode fp32 problem of a case (bhsd, packed). */
function argsOf(c: Case, scoreModifier: AttentionScoreModifier | undefined = c.mod): AttentionFwdArgs {
  const nheadQ = c.nheadK * c.ratio;
  const op = (nhead: number, rows: number, salt: number) =>
    attentionTestOperand(
      'fp32',
      packedAttentionStrides('bhsd', nhead, rows, c.d),
      { batches: 1, nhead, rows, hdim: c.d },
      attentionTestHash(c.seed + salt),
    );
  return {
    batch: 1,
    nheadQ,
    nheadK: c.nheadK,
    hdimQ: c.d,
    seqlenQ: c.sq,
    seqlenK: c.sk,
    q: op(nheadQ, c.sq, 1),
    k: op(c.nheadK, c.sk, 2),
    v: op(c.nheadK, c.sk, 3),
    ...(c.mask === undefined ? {} : { mask: c.mask }),
    scale: 0.75,
    ...(scoreModifier === undefined ? {} : { scoreModifier }),
  };
}

const near = (got: number, want: number, tol = 1e-6): boolean =>
  Number.isFinite(want) ? Math.abs(got - want) <= tol * (1 + Math.abs(want)) : got === want;

describe('attention score modifiers (soft-capping, ALiBi) in the references', () => {
  it('the blocked forward reference equals the naive formula with either modifier', () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        const ref = referenceAttentionFwd(argsOf(c));
        const naive = naiveAttentionFwd(argsOf(c));
        ref.o.forEach((v, i) => expect(near(v, naive.o[i]!), `o[${i}]`).toBe(true));
        ref.lse.forEach((v, i) => expect(near(v, naive.lse[i]!), `lse[${i}]`).toBe(true));
      }),
      { numRuns: 150 },
    );
  });

  it('the backward reference equals central finite differences of the naive forward with either modifier', () => {
    const eps = 2 ** -10;
    fc.assert(
      fc.property(caseArb, (c) => {
        const args = argsOf(c);
        const fwd = referenceAttentionFwd(args);
        const nheadQ = c.nheadK * c.ratio;
        const strides = packedAttentionStrides('bhsd', nheadQ, c.sq, c.d);
        const dO = attentionTestOperand(
          'fp32',
          strides,
          { batches: 1, nhead: nheadQ, rows: c.sq, hdim: c.d },
          attentionTestHash(c.seed + 4),
        );
        const bwd = referenceAttentionBwd({ ...args, o: { dtype: 'fp32', data: fwd.o, strides }, dO, lse: fwd.lse });
        const g = dO.data as Float32Array;
        const loss = (a: AttentionFwdArgs): number => naiveAttentionFwd(a).o.reduce((acc, o, i) => acc + o * g[i]!, 0);
        for (const [name, grad] of [
          ['q', bwd.dq],
          ['k', bwd.dk],
        ] as const) {
          const data = args[name].data as Float32Array;
          data.forEach((_, at) => {
            const shifted = (delta: number) => {
              const copy = data.slice();
              copy[at] = copy[at]! + delta;
              return loss({ ...args, [name]: { ...args[name], data: copy } });
            };
            const fd = (shifted(eps) - shifted(-eps)) / (2 * eps);
            expect(Math.abs(grad[at]! - fd), `d${name}[${at}] = ${grad[at]}, finite difference ${fd}`).toBeLessThanOrEqual(
              5e-5 + 1e-4 * Math.abs(fd),
            );
          });
        }
      }),
      { numRuns: 60 },
    );
  });

  it('golden: ALiBi with zero slopes and soft-capping with a huge cap change nothing; one key gives LSE = the modified logit', () => {
    const c: Case = { nheadK: 1, ratio: 2, sq: 5, sk: 7, d: 3, mod: { kind: 'alibi', slopes: [0, 0] }, mask: undefined, seed: 11 };
    const plain = referenceAttentionFwd(argsOf(c, undefined));
    expect(Array.from(referenceAttentionFwd(argsOf(c)).o)).toEqual(Array.from(plain.o));
    const capped = referenceAttentionFwd(argsOf({ ...c, mod: { kind: 'softcap', cap: 1e9 } }));
    capped.o.forEach((v, i) => expect(near(v, plain.o[i]!, 1e-9)).toBe(true));
    const one: Case = { ...c, sq: 1, sk: 1, mod: { kind: 'softcap', cap: 0.5 } };
    const a = argsOf(one);
    const x =
      0.75 *
      Array.from(a.q.data)
        .slice(0, 3)
        .reduce((s, q, d) => s + q * a.k.data[d]!, 0);
    expect(near(referenceAttentionFwd(a).lse[0]!, 0.5 * Math.tanh(x / 0.5))).toBe(true);
    expect(attentionScoreAt({ kind: 'alibi', slopes: [0.5] }, 0, 3, 5).logit(1, 0, 4)).toBe(1 - 0.5 * Math.abs(0 + 5 - 3 - 4));
  });

  it('rejects a cap ≤ 0, slopes of the wrong count or an unknown kind with typed errors naming them', () => {
    const c: Case = { nheadK: 1, ratio: 1, sq: 2, sk: 2, d: 2, mod: { kind: 'softcap', cap: 0 }, mask: undefined, seed: 1 };
    expect(() => referenceAttentionFwd(argsOf(c))).toThrow(ArgumentError);
    expect(() => referenceAttentionFwd(argsOf(c))).toThrow(/scoreModifier\.cap/);
    expect(() => referenceAttentionFwd(argsOf({ ...c, mod: { kind: 'alibi', slopes: [1, 2] } }))).toThrow(/scoreModifier\.slopes/);
    expect(() => referenceAttentionFwd(argsOf({ ...c, mod: { kind: 'bias' } as unknown as AttentionScoreModifier }))).toThrow(
      /scoreModifier\.kind/,
    );
  });
});
