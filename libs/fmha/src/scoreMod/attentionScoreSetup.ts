// A score modifier set up for one problem, for the host code that runs it (examples, GPU specs):
// the reference's spec, the kernel's hook and the host values, with ALiBi's slopes to upload.
import type { AttentionScoreModifier } from '../reference/attentionScoreModifier.ts';
import { AlibiScore } from './alibiScore.ts';
import type { FmhaScoreModifier, FmhaScoreModifierKind, FmhaScoreModifierSpec } from './fmhaScoreModifier.ts';
import { SoftCapScore } from './softCapScore.ts';

/** A modifier for one problem. */
export interface AttentionScoreSetup {
  readonly reference: AttentionScoreModifier;
  readonly modifier: FmhaScoreModifier;
  /** ALiBi: one fp32 slope per query head (to upload; `kernel` takes its address). */
  readonly slopes?: Float32Array;
  kernel(slopesPtr?: bigint): FmhaScoreModifierSpec;
}

/** ALiBi's geometric slopes of the paper: 2^(−8(h+1)/H) for query head h of H (fp32). */
export function alibiGeometricSlopes(nheadQ: number): Float32Array {
  return Float32Array.from({ length: nheadQ }, (_, h) => 2 ** ((-8 * (h + 1)) / nheadQ));
}

/** Soft-capping at `cap`. */
export function softCapScoreSetup(cap: number): AttentionScoreSetup {
  return { reference: { kind: 'softcap', cap }, modifier: new SoftCapScore(), kernel: () => ({ kind: 'softcap', cap }) };
}

/** ALiBi with `slopes` (default the geometric ones), one per query head. */
export function alibiScoreSetup(nheadQ: number, slopes: Float32Array = alibiGeometricSlopes(nheadQ)): AttentionScoreSetup {
  return {
    reference: { kind: 'alibi', slopes: Array.from(slopes) },
    modifier: new AlibiScore(),
    slopes,
    kernel: (ptr) => ({ kind: 'alibi', slopes: { ptr: ptr ?? 0n, bytes: 4 * nheadQ } }),
  };
}

/** The setup of `kind` for `nheadQ` query heads (soft-capping at `cap`, ALiBi with the geometric slopes); none without a kind. */
export function attentionScoreSetup(kind: FmhaScoreModifierKind | undefined, nheadQ: number, cap: number): AttentionScoreSetup | undefined {
  return kind === 'softcap' ? softCapScoreSetup(cap) : kind === 'alibi' ? alibiScoreSetup(nheadQ) : undefined;
}
