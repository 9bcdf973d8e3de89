// The device memory of one run of a forward attention runner (dense or sparse).
import type { FmhaScoreModifierSpec } from '@tilekit/fmha';
import type { DeviceRange, Stream } from '@tilekit/runtime';

/** Device memory of one run: inputs, O, LSE (when the problem asks for it), group-mode arrays (int32). */
export interface FmhaFwdRunnerBuffers {
  readonly q: DeviceRange;
  readonly k: DeviceRange;
  readonly v: DeviceRange;
  readonly o: DeviceRange;
  readonly lse?: DeviceRange;
  readonly seqstartQ?: DeviceRange;
  readonly seqstartK?: DeviceRange;
  readonly seqlenK?: DeviceRange;
  readonly stream?: Stream;
  /** The values of the problem's score modifier (its cap, or ALiBi's fp32 slopes); required exactly when the problem has one. */
  readonly scoreModifier?: FmhaScoreModifierSpec;
}
