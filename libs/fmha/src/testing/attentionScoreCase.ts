// The score modifiers the GPU specs run (forward and backward alike): the reference's spec, the
// kernel's hook and the host values, with ALiBi's slopes for the caller to upload.
import type { AttentionScoreModifier } from '../reference/attentionScoreModifier.ts';
import { AlibiScore } from '../scoreMod/alibiScore.ts';
import type { FmhaScoreModifier, FmhaScoreModifierSpec } from '../scoreMod/fmhaScoreModifier.ts';
import { SoftCapScore } from '../scoreMod/softCapScore.ts';

/** A modifier of a GPU case. */
export interface AttentionScoreCase {
  readonly reference: AttentionScoreModifier;
  readonly modifier: FmhaScoreModifier;
  /** ALiBi: one fp32 slope per query head (to upload; `kernel` takes its address). */
  readonly slopes?: Float32Array;
  kernel(slopesPtr?: bigint): FmhaScoreModifierSpec;
}

/** Soft-capping at `cap` (default 1.5, small enough that tanh bends typical scores). */
export function softCapScoreCase(cap = 1.5): AttentionScoreCase {
  return { reference: { kind: 'softcap', cap }, modifier: new SoftCapScore(), kernel: () => ({ kind: 'softcap', cap }) };
}

/** ALiBi with the geometric slopes 2^(−8(h+1)/H) of the paper, one per query head. */
export function alibiScoreCase(nheadQ: number): AttentionScoreCase {
  const slopes = Float32Array.from({ length: nheadQ }, (_, h) => 2 ** ((-8 * (h + 1)) / nheadQ));
  return {
    reference: { kind: 'alibi', slopes: Array.from(slopes) },
    modifier: new AlibiScore(),
    slopes,
    kernel: (ptr) => ({ kind: 'alibi', slopes: { ptr: ptr ?? 0n, bytes: 4 * nheadQ } }),
  };
}

/** The case of `kind` for `nheadQ` query heads (none without a kind). */
export function attentionScoreCase(kind: 'softcap' | 'alibi' | undefined, nheadQ: number): AttentionScoreCase | undefined {
  return kind === 'softcap' ? softCapScoreCase() : kind === 'alibi' ? alibiScoreCase(nheadQ) : undefined;
}
