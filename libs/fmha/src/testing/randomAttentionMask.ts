// Random attention masks for the operators' randomized GPU specs (fmha forward and backward).
import fc from 'fast-check';
import { causalBottomRight, causalTopLeft, noMask, type AttentionMaskSpec } from '../mask/attentionMaskSpec.ts';

/** Window sides the draws pick from (−1 = unbounded). */
const windowSizeArb = fc.constantFrom(-1, 0, 1, 16, 63, 130);

/** No mask, causal from either corner, or a (left, right) window from either corner (−1 = unbounded). */
export const attentionRandomMaskArb: fc.Arbitrary<AttentionMaskSpec> = fc.oneof(
  { weight: 3, arbitrary: fc.constant(noMask) },
  { weight: 2, arbitrary: fc.constantFrom(causalTopLeft, causalBottomRight) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('window' as const),
      alignment: fc.constantFrom('topLeft' as const, 'bottomRight' as const),
      left: windowSizeArb,
      right: windowSizeArb,
    }),
  },
);
