import { fmhaFwdTestProblem as problem, fmhaFwdTestRange as big, rejectedArguments as problemArguments } from '@tilekit/fmha/testing';
import type { FmhaFwdBuffers } from '@tilekit/fmha-launch';
import { checkTiledTensorMap, type TiledTensorMapOptions } from '@tilekit/runtime';
import { describe, expect, it } from 'vitest';
import { FMHA_FWD_CATALOG } from './fmhaFwdCatalog.ts';
import { prepareFmhaFwdLaunch } from '@tilekit/fmha-launch';
import { FMHA_FWD_SCORE_MOD_CATALOG } from './fmhaFwdScoreModCatalog.ts';

const encode = (o: TiledTensorMapOptions): Uint8Array => {
  checkTiledTensorMap(o);
  return new Uint8Array(128);
};
const buffers = (extra: Partial<FmhaFwdBuffers> = {}): FmhaFwdBuffers => ({
  q: big(0),
  k: big(1),
  v: big(2),
  o: big(3),
  lse: big(4),
  seqstartQ: big(5),
  seqstartK: big(6),
  ...extra,
});

describe('prepareFmhaFwdLaunch argument checks', () => {
  const p = problem();
  const instance = FMHA_FWD_CATALOG.find(
    (i) =>
      i.policy.dtype === 'fp16' && i.policy.headDim === 128 && i.policy.headDimV === 128 && i.policy.mask === 'none' && !i.policy.splitKv,
  )!;

  it('accepts good buffers and reports every broken one together, in the order checked', () => {
    expect(problemArguments(() => prepareFmhaFwdLaunch(instance, p, buffers(), encode))).toEqual([]);
    const { lse: _lse, ...noLse } = buffers();
    const bad = {
      ...noLse,
      q: { ptr: 0x1000_0008n, bytes: 2 ** 28 },
      v: { ptr: 0x3000_0000n, bytes: 10 },
      o: { ptr: 0x4000_0001n, bytes: 2 ** 28 },
    };
    expect(problemArguments(() => prepareFmhaFwdLaunch(instance, p, bad, encode))).toEqual(['q', 'v', 'o', 'lse']);
    expect(problemArguments(() => prepareFmhaFwdLaunch(instance, problem({ dtype: 'bf16' }), bad, encode))).toEqual([
      'problem',
      'q',
      'v',
      'o',
      'lse',
    ]);
  });

  it("passes a score modifier's values; rejects a missing, mismatched or unexpected one (scoreModifier) and a problem of another modifier", () => {
    const softcap = FMHA_FWD_SCORE_MOD_CATALOG.find((i) => i.policy.scoreModifier?.tag === 'softcap' && i.policy.mask === 'none')!;
    const alibi = FMHA_FWD_SCORE_MOD_CATALOG.find((i) => i.policy.scoreModifier?.tag === 'alibi' && i.policy.mask === 'none')!;
    const ps = problem({ scoreModifier: 'softcap' });
    const pa = problem({ scoreModifier: 'alibi' });
    const slopes = { ptr: 0x7000_0000n, bytes: 4 * 8 };
    const packed = prepareFmhaFwdLaunch(softcap, ps, buffers({ scoreModifier: { kind: 'softcap', cap: 30 } }), encode).args;
    expect((softcap.signature.unpack(packed.bytes) as Record<string, unknown>).softcap_log2).toBeCloseTo(30 * Math.LOG2E, 4);
    const alibiArgs = prepareFmhaFwdLaunch(alibi, pa, buffers({ scoreModifier: { kind: 'alibi', slopes } }), encode).args;
    expect((alibi.signature.unpack(alibiArgs.bytes) as Record<string, unknown>).alibi_slopes).toBe(slopes.ptr);
    const rejected = (i: typeof softcap, q: typeof ps, b: Parameters<typeof buffers>[0]) =>
      problemArguments(() => prepareFmhaFwdLaunch(i, q, buffers(b), encode));
    expect(rejected(softcap, ps, {})).toEqual(['scoreModifier']);
    expect(rejected(softcap, ps, { scoreModifier: { kind: 'alibi', slopes } })).toEqual(['scoreModifier']);
    expect(rejected(softcap, ps, { scoreModifier: { kind: 'softcap', cap: -1 } })).toEqual(['scoreModifier.cap']);
    expect(rejected(alibi, pa, { scoreModifier: { kind: 'alibi', slopes: { ...slopes, bytes: 8 } } })).toEqual(['scoreModifier.slopes']);
    expect(rejected(instance, p, { scoreModifier: { kind: 'softcap', cap: 30 } })).toEqual(['scoreModifier']);
    expect(rejected(softcap, p, { scoreModifier: { kind: 'softcap', cap: 30 } })).toEqual(['problem']);
    expect(rejected(instance, ps, {})).toEqual(['problem']);
  });
});
