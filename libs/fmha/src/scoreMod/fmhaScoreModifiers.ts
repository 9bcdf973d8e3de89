// The score modifiers the attention kernels are built with.
import { AlibiScore } from './alibiScore.ts';
import type { FmhaScoreModifier } from './fmhaScoreModifier.ts';
import { SoftCapScore } from './softCapScore.ts';

/** Every score modifier the attention catalogs are built with: soft-capping and ALiBi. */
export const FMHA_SCORE_MODIFIERS: readonly FmhaScoreModifier[] = Object.freeze([new SoftCapScore(), new AlibiScore()]);
