// What a score modifier adds to an instance key, shared by every kernel that carries one.
import type { FmhaScoreModifier } from './fmhaScoreModifier.ts';

/**
 * The instance-key part of `modifier`: the config field `score` (its tag) and the name tag that
 * ends the name with it. Nothing without a modifier, so the names and hashes of the other
 * instances do not change.
 */
export function scoreModifierKeyPart(modifier: FmhaScoreModifier | undefined): {
  readonly config: { readonly score?: string };
  readonly tags: { readonly score?: string };
} {
  return modifier === undefined ? { config: {}, tags: {} } : { config: { score: modifier.tag }, tags: { score: '' } };
}
