// Comparing GPU indexer logits with the reference under the per-element error bound.
import { DsaArgumentError } from '../dsaArgumentError.ts';
import { dsaCheckLength } from './dsaCheckLength.ts';

/** Options of {@link compareDsaLogits}. */
export interface DsaLogitsCompareOptions {
  /** Multiplies every bound (default 1); > 1 only to investigate, never to make a failing test pass. */
  readonly slack?: number;
}

/** What {@link compareDsaLogits} found. */
export interface DsaLogitsComparison {
  /** Elements whose reference logit is finite (those checked against the bound). */
  readonly checked: number;
  /** Finite-reference elements with |actual − expected| > slack·bound, or a non-finite actual. */
  readonly overBound: number;
  /** Elements where exactly one of expected, actual is −∞ (the masks differ). */
  readonly maskMismatches: number;
  /** The largest |actual − expected| over finite-reference elements (∞ for a non-finite actual; 0 if none). */
  readonly worstError: number;
  /** Its element index (−1 if nothing was checked). */
  readonly worstIndex: number;
  /** The largest |actual − expected| / (slack·bound): above 1 fails; shows the margin of a passing kernel. */
  readonly worstRatio: number;
  /** overBound === 0 and maskMismatches === 0. */
  readonly ok: boolean;
}

interface Tally {
  checked: number;
  overBound: number;
  maskMismatches: number;
  worstError: number;
  worstIndex: number;
  worstRatio: number;
}

function tallyElement(tally: Tally, i: number, expected: number, actual: number, allowed: number): void {
  if (expected === Number.NEGATIVE_INFINITY || actual === Number.NEGATIVE_INFINITY) {
    if (expected !== actual) tally.maskMismatches++;
    if (expected === Number.NEGATIVE_INFINITY) return;
  }
  tally.checked++;
  const error = Number.isFinite(actual) ? Math.abs(actual - expected) : Number.POSITIVE_INFINITY;
  const ratio = error === 0 ? 0 : error / allowed;
  if (ratio > 1 || Number.isNaN(ratio)) tally.overBound++;
  if (tally.worstIndex < 0 || error > tally.worstError) {
    tally.worstError = error;
    tally.worstIndex = i;
  }
  tally.worstRatio = Math.max(tally.worstRatio, ratio);
}

/**
 * Compares GPU logits `actual` with reference logits `expected` (both [rows][cols] fp32) under `errorBound`
 * (from {@link dsaIndexerPrefillReferenceWithBound} / {@link dsaIndexerDecodeReferenceWithBound}): where expected is
 * −∞, actual must be −∞ exactly; elsewhere actual must be finite with |actual − expected| ≤ slack · errorBound[i].
 * A NaN or ±∞ actual at a finite expected counts as over the bound.
 * @throws DsaArgumentError for mismatched lengths, an expected value that is NaN or +∞, a negative or NaN bound,
 * or a slack that is not a positive finite number.
 */
export function compareDsaLogits(
  expected: Float32Array,
  actual: Float32Array,
  errorBound: Float64Array,
  options: DsaLogitsCompareOptions = {},
): DsaLogitsComparison {
  const slack = options.slack ?? 1;
  if (!(slack > 0) || !Number.isFinite(slack)) throw new DsaArgumentError('options.slack', 'must be a positive finite number', slack);
  dsaCheckLength('actual', actual, expected.length, 'expected.length');
  dsaCheckLength('errorBound', errorBound, expected.length, 'expected.length');
  const tally: Tally = { checked: 0, overBound: 0, maskMismatches: 0, worstError: 0, worstIndex: -1, worstRatio: 0 };
  for (let i = 0; i < expected.length; i++) {
    const e = expected[i]!;
    if (Number.isNaN(e) || e === Number.POSITIVE_INFINITY) throw new DsaArgumentError(`expected[${i}]`, 'must be finite or −∞', e);
    if (!(errorBound[i]! >= 0)) throw new DsaArgumentError(`errorBound[${i}]`, 'must be ≥ 0', errorBound[i]);
    tallyElement(tally, i, e, actual[i]!, slack * errorBound[i]!);
  }
  return { ...tally, ok: tally.overBound === 0 && tally.maskMismatches === 0 };
}
