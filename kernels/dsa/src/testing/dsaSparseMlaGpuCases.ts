// The ragged cases the sparse MLA GPU spec runs against the CPU reference: both head counts, topk below, at and past
// a 64-token block, sKv not a multiple of 64, invalid entries of every kind, topk_length (0 and full included),
// sinks, fully empty rows, duplicates, and decode with 1 and 2 queries per sequence. Sized so the float64 reference
// stays within a few seconds per case.
import type { DsaRandomSparseMlaDecodeOptions, DsaRandomSparseMlaPrefillOptions } from './dsaSparseMlaInputs.ts';

/** One prefill case: a label, the seed of its Prng, and what dsaRandomSparseMlaPrefillInput draws. */
export interface DsaSparseMlaPrefillGpuCase {
  readonly label: string;
  readonly seed: number;
  readonly options: DsaRandomSparseMlaPrefillOptions;
}

/** One decode case: a label, the seed of its Prng, and what dsaRandomSparseMlaDecodeInput draws. */
export interface DsaSparseMlaDecodeGpuCase {
  readonly label: string;
  readonly seed: number;
  readonly options: DsaRandomSparseMlaDecodeOptions;
}

/** The prefill cases (seeds 0x5a_0001 …, in table order). */
export const DSA_SPARSE_MLA_PREFILL_GPU_CASES: readonly DsaSparseMlaPrefillGpuCase[] = Object.freeze(
  (
    [
      ['h64 topk 64, sKv 100 (one partial page)', { sQ: 8, hQ: 64, sKv: 100, topk: 64 }],
      ['h128 topk 128, sKv 4097', { sQ: 8, hQ: 128, sKv: 4097, topk: 128 }],
      ['h64 topk 1', { sQ: 16, hQ: 64, sKv: 70, topk: 1 }],
      ['h128 topk 100 (not a multiple of 64)', { sQ: 8, hQ: 128, sKv: 1000, topk: 100 }],
      ['h64 topk 200 > sKv 130 (−1 padding)', { sQ: 8, hQ: 64, sKv: 130, topk: 200 }],
      ['h128 invalid entries of every kind (30%)', { sQ: 8, hQ: 128, sKv: 500, topk: 256, invalidRate: 0.3 }],
      ['h64 topk_length, empty rows', { sQ: 16, hQ: 64, sKv: 777, topk: 192, topkLength: true, emptyRowRate: 0.2 }],
      ['h128 empty rows without topk_length, sinks', { sQ: 16, hQ: 128, sKv: 300, topk: 64, emptyRowRate: 0.25, sink: true }],
      ['h128 sinks and topk_length', { sQ: 8, hQ: 128, sKv: 2049, topk: 320, sink: true, topkLength: true }],
      ['h64 duplicates', { sQ: 8, hQ: 64, sKv: 90, topk: 128, duplicateRate: 0.3 }],
      ['h128 topk 2048, sKv 8191', { sQ: 4, hQ: 128, sKv: 8191, topk: 2048, invalidRate: 0.02 }],
      ['h64 all invalid', { sQ: 4, hQ: 64, sKv: 64, topk: 128, invalidRate: 1 }],
    ] as const
  ).map(([label, options], i) => ({ label, seed: 0x5a_0001 + i, options })),
);

/** The decode cases (seeds 0x5b_0001 …, in table order); slots are −1 when invalid. */
export const DSA_SPARSE_MLA_DECODE_GPU_CASES: readonly DsaSparseMlaDecodeGpuCase[] = Object.freeze(
  (
    [
      ['b1 s_q 1 h128 topk 64', { b: 1, sQ: 1, hQ: 128, topk: 64, numPages: 3 }],
      ['b4 s_q 2 h64 topk 256', { b: 4, sQ: 2, hQ: 64, topk: 256, numPages: 9 }],
      ['b3 s_q 1 h128 topk 100, topk_length', { b: 3, sQ: 1, hQ: 128, topk: 100, numPages: 5, topkLength: true }],
      ['b2 s_q 2 h128 topk 512, sinks', { b: 2, sQ: 2, hQ: 128, topk: 512, numPages: 16, sink: true }],
      ['b5 s_q 2 h64 empty sequences, 20% invalid', { b: 5, sQ: 2, hQ: 64, topk: 128, numPages: 4, emptyRowRate: 0.3, invalidRate: 0.2 }],
      ['b2 s_q 1 h64 topk 200 > slots 128 (−1 padding)', { b: 2, sQ: 1, hQ: 64, topk: 200, numPages: 2 }],
      ['b2 s_q 2 h128 topk 2048', { b: 2, sQ: 2, hQ: 128, topk: 2048, numPages: 40 }],
    ] as const
  ).map(([label, options], i) => ({ label, seed: 0x5b_0001 + i, options })),
);
