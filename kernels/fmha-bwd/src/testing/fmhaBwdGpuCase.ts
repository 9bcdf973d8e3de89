// The case fields the attention backward GPU specs share (the dq_dk_dv kernel alone and the whole
// three-kernel backward). Harness code for *.gpu.spec.ts; not exported by the package.
import type { AttentionMaskSpec } from '@tilekit/fmha';

/** One backward attention case: shapes, lengths and mask; each spec adds its own mode fields. */
export interface FmhaBwdGpuCase {
  /** The test's name. */
  readonly label: string;
  readonly dtype: 'fp16' | 'bf16';
  /** Head dim of Q, K, V and O. */
  readonly d: number;
  readonly batch: number;
  readonly h: number;
  /** Key/value heads (GQA); default `h`. */
  readonly hk?: number;
  /** Batch mode: one length each; group mode: per-batch lengths. */
  readonly sq: number | readonly number[];
  readonly sk: number | readonly number[];
  readonly mask: AttentionMaskSpec;
}
