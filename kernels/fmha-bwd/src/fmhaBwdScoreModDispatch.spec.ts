// CI (no GPU): a backward problem with a score modifier is checked, dispatched onto the
// score-modifier catalog's dq_dk_dv instance of its modifier and mask (the dense dot_do_o and
// convert_dq around it), rejected with a typed error where that catalog has no instance, and its
// dq_dk_dv launch packs the modifier's values.
import {
  FMHA_SCORE_MODIFIERS,
  type FmhaBwdExecutor,
  type FmhaScoreModifierKind,
  checkFmhaBwdProblem,
  FmhaBwdArgumentError,
  formatFmhaBwdProblem,
  type CheckedFmhaBwdProblem,
  type FmhaBwdProblem,
} from '@tilekit/fmha';
import { ArgumentError } from '@tilekit/numeric';
import { describe, expect, it } from 'vitest';
import { FMHA_BWD_DQ_DK_DV_CATALOG, FMHA_BWD_TRIPLES } from './fmhaBwdCatalog.ts';
import { dispatchFmhaBwd, fmhaBwdCatalogFor, NoFmhaBwdInstanceError } from './fmhaBwdDispatch.ts';
import { packFmhaBwdDqDkDv } from './fmhaBwdRunner.ts';
import { FMHA_BWD_SCORE_MOD_CATALOG, fmhaBwdScoreModInstance } from './fmhaBwdScoreModCatalog.ts';
import { fakeFmhaBwdArgs } from './testing/fakeFmhaBwdArgs.ts';

const silent: FmhaBwdExecutor<undefined> = { copyToDevice: () => {}, fillZero: () => {}, launch: () => {} };

const base: FmhaBwdProblem = { dtype: 'fp16', batch: 2, nheadQ: 4, nheadK: 2, hdimQ: 128, seqlenQ: 259, seqlenK: 300 };
const group: FmhaBwdProblem = {
  dtype: 'fp16',
  batch: 3,
  nheadQ: 4,
  nheadK: 2,
  hdimQ: 128,
  seqstartQ: [0, 17, 17, 276],
  seqstartK: [0, 5, 300, 600],
};

const dispatch = (p: FmhaBwdProblem | CheckedFmhaBwdProblem) =>
  dispatchFmhaBwd('rowsQ' in p ? p : checkFmhaBwdProblem(p), { executor: silent, smCount: 132, warn: () => {} });

/** The arguments of the `FmhaBwdArgumentError` `run` throws. */
function argumentsOf(run: () => unknown): string[] {
  try {
    run();
  } catch (e) {
    expect(e).toBeInstanceOf(FmhaBwdArgumentError);
    return (e as ArgumentError).problems.map((x) => x.argument);
  }
  throw new Error('accepted');
}

describe('backward problem with a score modifier', () => {
  it('accepts softcap and alibi (kept on the checked problem and in its line); none by default', () => {
    for (const scoreModifier of ['softcap', 'alibi'] as const) {
      const p = checkFmhaBwdProblem({ ...base, scoreModifier });
      expect(p.scoreModifier).toBe(scoreModifier);
      expect(formatFmhaBwdProblem(p)).toMatch(new RegExp(`atomic dQ ${scoreModifier}$`));
    }
    expect('scoreModifier' in checkFmhaBwdProblem(base)).toBe(false);
  });

  it('rejects another value, naming problem.scoreModifier and the kinds there are, with the other broken fields', () => {
    for (const bad of ['bias', 'ALIBI', 7, null, { kind: 'softcap' }]) {
      expect(argumentsOf(() => checkFmhaBwdProblem({ ...base, scoreModifier: bad as never }))).toEqual(['problem.scoreModifier']);
      expect(() => checkFmhaBwdProblem({ ...base, scoreModifier: bad as never })).toThrow(
        /problem\.scoreModifier: must be one of softcap, alibi/,
      );
    }
    expect(argumentsOf(() => checkFmhaBwdProblem({ ...base, hdimQ: 0, scoreModifier: 'bias' as never }))).toEqual([
      'problem.hdimQ',
      'problem.scoreModifier',
    ]);
  });
});

describe('backward dispatch with a score modifier', () => {
  it("picks the score-modifier catalog's dq_dk_dv of the modifier and mask kind in batch and group mode, with the dense dot_do_o and convert_dq", () => {
    for (const modifier of FMHA_SCORE_MODIFIERS) {
      const scoreModifier = modifier.tag as FmhaScoreModifierKind;
      for (const [mask, kind] of [
        ['0', 'none'],
        ['t', 'window'],
        ['b:17,5', 'window'],
      ] as const) {
        for (const shape of [base, group]) {
          const { launcher, kernels } = dispatch({ ...shape, mask, scoreModifier });
          const want = fmhaBwdScoreModInstance(modifier, 'fp16', 128, kind);
          expect(kernels.dqDkDv.name).toBe(want.name);
          expect(kernels.dqDkDv.key.hash).toBe(want.key.hash);
          expect(kernels.dqDkDv.name.endsWith(`_${scoreModifier}`)).toBe(true);
          expect(kernels.dqDkDv.key.config).toMatchObject({ score: scoreModifier, mask: kind, dqMode: 'atomic' });
          expect(FMHA_BWD_SCORE_MOD_CATALOG).toContain(kernels.dqDkDv);
          expect(launcher.triple!.dqDkDv.name).toBe(want.name);
          expect(launcher.triple!.dqDkDv.groupMode).toBe(shape === group);
          // The preprocess and the dQ convert are the dense problem's.
          const dense = dispatch({ ...shape, mask });
          expect(kernels.dotDoO).toBe(dense.kernels.dotDoO);
          expect(kernels.convertDq).toBe(dense.kernels.convertDq);
          expect(dense.kernels.dqDkDv.policy.scoreModifier).toBeUndefined();
          expect(FMHA_BWD_DQ_DK_DV_CATALOG).toContain(dense.kernels.dqDkDv);
        }
      }
    }
  });

  it("selects from the modifier's instances only; the dense triples and catalog without one", () => {
    const softcap = fmhaBwdCatalogFor(checkFmhaBwdProblem({ ...base, scoreModifier: 'softcap' }));
    expect(softcap.dqDkDv.map((i) => i.policy.scoreModifier?.tag)).toEqual(['softcap', 'softcap']);
    expect(softcap.triples).toHaveLength(4);
    expect(fmhaBwdCatalogFor(checkFmhaBwdProblem(base)).triples).toBe(FMHA_BWD_TRIPLES);
  });

  it('rejects a problem the score-modifier catalog has no instance for, naming the field and the rule', () => {
    const softcap = { ...base, scoreModifier: 'softcap' } as const;
    expect(argumentsOf(() => dispatch({ ...softcap, dtype: 'bf16' }))).toEqual(['problem.dtype']);
    expect(() => dispatch({ ...softcap, dtype: 'bf16' })).toThrow(
      /problem\.dtype: must be fp16: the softcap backward kernels take no bf16/,
    );
    expect(argumentsOf(() => dispatch({ ...softcap, hdimQ: 64 }))).toEqual(['problem.hdimQ']);
    expect(() => dispatch({ ...softcap, hdimQ: 64 })).toThrow(/the softcap backward kernels' head dims \(128\/128\)/);
    expect(argumentsOf(() => dispatch({ ...softcap, scoreModifier: 'alibi', deterministic: true }))).toEqual(['problem.deterministic']);
    expect(() => dispatch({ ...softcap, deterministic: true })).toThrow(/no deterministic softcap backward kernel/);
    // The dense problems keep the dense catalog's rules (bf16, d64 and determinism run there).
    expect(() => dispatch({ ...base, dtype: 'bf16', hdimQ: 64, deterministic: true })).not.toThrow();
  });

  it('given triples whose dq_dk_dv applies another modifier (or none) are no instance for the problem', () => {
    const p = checkFmhaBwdProblem({ ...base, scoreModifier: 'alibi' });
    expect(() => dispatchFmhaBwd(p, { triples: FMHA_BWD_TRIPLES, executor: silent, smCount: 132 })).toThrow(NoFmhaBwdInstanceError);
    const softcapTriples = fmhaBwdCatalogFor(checkFmhaBwdProblem({ ...base, scoreModifier: 'softcap' })).triples;
    expect(() => dispatchFmhaBwd(p, { triples: softcapTriples, executor: silent, smCount: 132 })).toThrow(
      /applies softcap, the problem alibi/,
    );
    expect(() => dispatchFmhaBwd(checkFmhaBwdProblem(base), { triples: softcapTriples, executor: silent, smCount: 132 })).toThrow(
      NoFmhaBwdInstanceError,
    );
  });
});

describe("dq_dk_dv launch with a score modifier's values", () => {
  const strides = { batch: 259 * 512, head: 128, row: 512 };
  const packed = (scoreModifier: FmhaScoreModifierKind | undefined, extra: object) => {
    const p = checkFmhaBwdProblem({ ...base, seqlenK: 259, ...(scoreModifier ? { scoreModifier } : {}) });
    const { launcher, kernels } = dispatch(p);
    const launch = packFmhaBwdDqDkDv(
      kernels.dqDkDv,
      launcher.traits,
      launcher.workspace!,
      fakeFmhaBwdArgs(p, strides, extra),
      () => new Uint8Array(128),
    );
    return kernels.dqDkDv.signature.unpack(launch.args.bytes) as Record<string, unknown>;
  };
  const slopes = { ptr: 0x7000_0000n, bytes: 4 * 4 };

  it('packs the cap (log2 domain) or the slopes address after the kernel parameters', () => {
    expect(packed('softcap', { scoreModifier: { kind: 'softcap', cap: 30 } }).softcap_log2).toBeCloseTo(30 * Math.LOG2E, 4);
    expect(packed('alibi', { scoreModifier: { kind: 'alibi', slopes } }).alibi_slopes).toBe(slopes.ptr);
  });

  it('rejects a missing, mismatched or bad spec, and a spec for a kernel without a modifier, naming scoreModifier', () => {
    const argument = (run: () => unknown): string => {
      try {
        run();
      } catch (e) {
        expect(e).toBeInstanceOf(ArgumentError);
        return (e as ArgumentError).argument;
      }
      throw new Error('accepted');
    };
    expect(argument(() => packed('softcap', {}))).toBe('scoreModifier');
    expect(argument(() => packed('softcap', { scoreModifier: { kind: 'alibi', slopes } }))).toBe('scoreModifier');
    expect(argument(() => packed('softcap', { scoreModifier: { kind: 'softcap', cap: Number.NaN } }))).toBe('scoreModifier.cap');
    expect(argument(() => packed('alibi', { scoreModifier: { kind: 'alibi', slopes: { ...slopes, bytes: 8 } } }))).toBe(
      'scoreModifier.slopes',
    );
    expect(argument(() => packed(undefined, { scoreModifier: { kind: 'softcap', cap: 30 } }))).toBe('scoreModifier');
  });
});
