// Forward instances with a score modifier (soft-capping, ALiBi), beside the dense catalog and
// compiled in CI like it (fmhaFwdCatalog.compile.spec.ts).
import {
  FMHA_FWD_REGISTER_SPLIT,
  FMHA_FWD_SEQUENTIAL_SCHEDULE,
  FMHA_SCORE_MODIFIERS,
  FMHA_FWD_STAGES,
  FmhaFwdCatalogError,
  type FmhaFwdMaskKind,
  type FmhaScoreModifier,
} from '@tilekit/fmha';
import { FMHA_FWD_TILES } from './fmhaFwdCatalog.ts';
import { FmhaFwdInstance } from '@tilekit/fmha-launch';

/**
 * The one-pass instance of (dtype, d = d_v, mask) of the dense catalog's tile, with `scoreModifier`.
 * ALiBi's per-element distance does not fit the registers beside the softmax-overlapped schedule
 * (the window instance spills), so ALiBi instances run one tile at a time.
 */
export function fmhaFwdScoreModInstance(
  scoreModifier: FmhaScoreModifier,
  dtype: 'fp16' | 'bf16',
  d: number,
  mask: FmhaFwdMaskKind,
): FmhaFwdInstance {
  const dims = FMHA_FWD_TILES.find((t) => t.headDim === d && t.headDimV === d);
  if (dims === undefined) throw new FmhaFwdCatalogError(`no forward tile for head dim ${d} (d = d_v)`);
  const overlap = scoreModifier.tag === 'alibi' ? { schedule: FMHA_FWD_SEQUENTIAL_SCHEDULE } : {};
  return new FmhaFwdInstance({
    dtype,
    ...dims,
    ...overlap,
    stages: FMHA_FWD_STAGES,
    ...FMHA_FWD_REGISTER_SPLIT,
    mask,
    splitKv: false,
    scoreModifier,
  });
}

/** fp16 d128, no mask and window, for each modifier. */
export const FMHA_FWD_SCORE_MOD_CATALOG: readonly FmhaFwdInstance[] = Object.freeze(
  FMHA_SCORE_MODIFIERS.flatMap((m) => (['none', 'window'] as const).map((mask) => fmhaFwdScoreModInstance(m, 'fp16', 128, mask))),
);
