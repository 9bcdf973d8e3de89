// The device memory of one forward attention launch (dense or sparse).
import type { FmhaScoreModifierSpec } from '@tilekit/fmha';
import type { DeviceRange, Stream } from '@tilekit/runtime';

/** Device memory of one launch. Group mode needs `seqstartQ`/`seqstartK` (int32, batch + 1) and optionally `seqlenK` (int32, batch). */
export interface FmhaFwdBuffers {
  readonly q: DeviceRange;
  readonly k: DeviceRange;
  readonly v: DeviceRange;
  /** O, or with split-KV the fp32 workspace of the partial O (`fmhaFwdWorkspace`). */
  readonly o: DeviceRange;
  /** LSE, or with split-KV the fp32 workspace of the partial LSE. */
  readonly lse?: DeviceRange;
  readonly seqstartQ?: DeviceRange;
  readonly seqstartK?: DeviceRange;
  readonly seqlenK?: DeviceRange;
  readonly stream?: Stream;
  /** The values of the kernel's score modifier (its cap, or ALiBi's fp32 slopes); required exactly when the kernel has one. */
  readonly scoreModifier?: FmhaScoreModifierSpec;
}
