import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkFmhaFwdProblem } from '@tilekit/fmha';
import { planFmhaFwd } from './fmhaFwdRunner.ts';
import { chooseFmhaFwdSplits, FMHA_FWD_SPLIT_FILL, withFmhaFwdSplits } from './fmhaFwdSplit.ts';

const tiles = { tileM: 128, tileN: 128 };

describe('chooseFmhaFwdSplits', () => {
  it('bounds: 1 ≤ s ≤ min(128, key tiles); 1 when the grid fills 0.8 of a wave; at most ~2 waves', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 1, max: 64 }),
        fc.integer({ min: 0, max: 600 }),
        fc.integer({ min: 0, max: 70000 }),
        fc.integer({ min: 1, max: 200 }),
        fc.constantFrom(64, 96, 128),
        (batch, nheadQ, sq, sk, sms, tileN) => {
          const p = checkFmhaFwdProblem({ dtype: 'fp16', batch, nheadQ, hdimQ: 128, seqlenQ: sq, seqlenK: sk });
          const s = chooseFmhaFwdSplits(p, sms, { tileM: 128, tileN });
          const blocks = batch * nheadQ * Math.max(1, Math.ceil(sq / 128));
          expect(s).toBeGreaterThanOrEqual(1);
          expect(s).toBeLessThanOrEqual(Math.max(1, Math.min(128, Math.ceil(sk / tileN))));
          if (blocks >= FMHA_FWD_SPLIT_FILL * sms) expect(s).toBe(1);
          expect(blocks * s).toBeLessThanOrEqual(2 * sms + blocks);
          // Every split gets keys: s − 1 splits of ⌈⌈sk/s⌉/tileN⌉ tiles do not already cover sk.
          if (s > 1) expect((s - 1) * Math.ceil(Math.ceil(sk / s) / tileN) * tileN).toBeLessThan(sk);
        },
      ),
    );
  });

  it('decode shapes on an H200: few heads split, a full grid does not', () => {
    const few = checkFmhaFwdProblem({ dtype: 'fp16', batch: 1, nheadQ: 8, hdimQ: 128, seqlenQ: 1, seqlenK: 32768 });
    const s = chooseFmhaFwdSplits(few, 132, tiles);
    expect(s).toBeGreaterThan(8);
    expect(8 * s).toBeGreaterThanOrEqual(0.8 * 132);
    expect(
      chooseFmhaFwdSplits(
        checkFmhaFwdProblem({ dtype: 'fp16', batch: 4, nheadQ: 32, hdimQ: 128, seqlenQ: 16, seqlenK: 32768 }),
        132,
        tiles,
      ),
    ).toBe(1);
    expect(
      chooseFmhaFwdSplits(checkFmhaFwdProblem({ dtype: 'fp16', batch: 1, nheadQ: 2, hdimQ: 128, seqlenQ: 1, seqlenK: 100 }), 132, tiles),
    ).toBe(1);
    expect(() => chooseFmhaFwdSplits(few, 0, tiles)).toThrow(/smCount/);
  });

  it("'auto' is resolved by the plan: split instance, combine instance and workspace", () => {
    const p = checkFmhaFwdProblem({
      dtype: 'bf16',
      batch: 1,
      nheadQ: 4,
      hdimQ: 128,
      seqlenQ: 16,
      seqlenK: 4097,
      splitKv: 'auto',
      lse: true,
    });
    expect(p).toMatchObject({ numSplits: 1, splitKvAuto: true });
    const plan = planFmhaFwd(p, { smCount: 132 });
    expect(plan.problem.numSplits).toBeGreaterThan(1);
    expect(plan.problem.splitKvAuto).toBe(false);
    expect(plan.instance.policy.splitKv).toBe(true);
    expect(plan.combine?.name).toBe('fmha_fwd_combine_sm90_bf16_dv128_m16_t128');
    const n = plan.problem.numSplits;
    expect(plan.workspaceLseOffset).toBe(Math.ceil((n * 4 * 16 * 128 * 4) / 256) * 256);
    expect(plan.workspaceBytes).toBe(plan.workspaceLseOffset + Math.ceil((n * 4 * 16 * 4) / 256) * 256);
    const one = planFmhaFwd(withFmhaFwdSplits(p, 1));
    expect([one.combine, one.workspaceBytes, one.instance.policy.splitKv]).toEqual([undefined, 0, false]);
    expect(() => withFmhaFwdSplits(p, 129)).toThrow(/numSplits/);
  });
});
