// dq_dk_dv instances with a score modifier (soft-capping, ALiBi): kept out of the dense catalog,
// whose triples cover every (dtype, d, mask, mode) once; compiled in CI like it.
import { FMHA_SCORE_MODIFIERS, type FmhaScoreModifier } from '@tilekit/fmha';
import { FMHA_BWD_REGISTER_SPLIT, fmhaBwdTile } from './fmhaBwdCatalog.ts';
import { FmhaBwdDqDkDvInstance, type FmhaBwdDqDkDvMaskKind } from './fmhaBwdDqDkDvInstance.ts';

/** The dq_dk_dv instance of (dtype, d, mask, dQ mode) with `scoreModifier`. */
export function fmhaBwdScoreModInstance(
  scoreModifier: FmhaScoreModifier,
  dtype: 'fp16' | 'bf16',
  d: number,
  mask: FmhaBwdDqDkDvMaskKind,
  dqMode: 'atomic' | 'split' = 'atomic',
): FmhaBwdDqDkDvInstance {
  return new FmhaBwdDqDkDvInstance({
    dtype,
    headDim: d,
    headDimV: d,
    ...fmhaBwdTile(d),
    ...FMHA_BWD_REGISTER_SPLIT,
    mask,
    dqMode,
    scoreModifier,
  });
}

/** fp16 d128, no mask and window, atomic dQ, for each modifier. */
export const FMHA_BWD_SCORE_MOD_CATALOG: readonly FmhaBwdDqDkDvInstance[] = Object.freeze(
  FMHA_SCORE_MODIFIERS.flatMap((m) => (['none', 'window'] as const).map((mask) => fmhaBwdScoreModInstance(m, 'fp16', 128, mask))),
);
