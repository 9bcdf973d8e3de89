// The host side of a kernel's score modifier: its parameter values from the caller's spec.
import type { FmhaScoreModifier, FmhaScoreModifierSpec } from '@tilekit/fmha';
import { ArgumentError } from '@tilekit/numeric';

/**
 * The values of the score-modifier parameters of a kernel built with `modifier` (none without
 * one) from `spec`. Throws ArgumentError naming `scoreModifier` when a kernel with a modifier gets
 * no spec or one of another kind, or a kernel without one gets a spec; the modifier checks the values.
 */
export function fmhaScoreArgValues(
  modifier: FmhaScoreModifier | undefined,
  spec: FmhaScoreModifierSpec | undefined,
  nheadQ: number,
): Readonly<Record<string, number | bigint>> {
  if (modifier === undefined) {
    if (spec !== undefined)
      throw new ArgumentError('scoreModifier', 'needs a kernel built with that score modifier; this one has none', spec.kind);
    return {};
  }
  if (spec?.kind !== modifier.tag)
    throw new ArgumentError('scoreModifier', `must be { kind: "${modifier.tag}", … } for this kernel`, spec?.kind);
  return modifier.argValues(spec, nheadQ);
}
