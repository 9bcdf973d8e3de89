// The cases of the fmha-bwd benchmark suite: the shapes, their names (the results history is keyed
// by them), our params, what the torch reference server's `attention_bwd` op runs for each
// (REFERENCE_OPS.md: bhsd files, varlen (Σs, h, d) with `seqlens`), the seed of their inputs and how
// their gradients are judged. The suite itself (running ours) lives in fmhaBwd.ts.
import type { SuiteCase } from '../benchSuite.ts';
import { SDPA_ERROR_BASELINES, SDPA_VARLEN_ERROR_BASELINES } from './attentionBaselines.ts';
import { attentionTensorFile, type AttentionFileLayout, type AttentionTensorFile } from './attentionFileLayout.ts';
import { caseSeed } from './caseSeed.ts';

/** One benchmarked backward (no GQA: h KV heads; dv = d). */
export interface FmhaBwdBenchShape {
  readonly dtype: 'fp16' | 'bf16';
  readonly b: number;
  readonly h: number;
  readonly d: number;
  readonly causal: boolean;
  readonly deterministic: boolean;
  readonly s?: number;
  /** Varlen: rows per sequence (q = k). */
  readonly seqlens?: readonly number[];
}

/** Ragged lengths of the varlen case. */
export const FMHA_BWD_VARLEN_SEQLENS: readonly number[] = Object.freeze([8192, 4097, 2048, 1000, 259, 17, 1, 4096]);

/** `fmha_bwd_b2_h16_s8192_d128_causal_fp16[_det]`, `fmha_bwd_varlen8_h16_d128_fp16`. */
export function fmhaBwdBenchName(s: FmhaBwdBenchShape): string {
  const seq = s.seqlens !== undefined ? `varlen${s.seqlens.length}_h${s.h}` : `b${s.b}_h${s.h}_s${s.s}`;
  return `fmha_bwd_${seq}_d${s.d}${s.causal ? '_causal' : ''}_${s.dtype}${s.deterministic ? '_det' : ''}`;
}

/** The acceptance shapes (atomic), their deterministic variants, and the varlen case. */
export const FMHA_BWD_BENCH_SHAPES: readonly FmhaBwdBenchShape[] = Object.freeze([
  ...[false, true].flatMap((deterministic) =>
    [64, 128].flatMap((d) =>
      [false, true].map((causal): FmhaBwdBenchShape => ({ dtype: 'fp16', b: 2, h: 16, d, causal, deterministic, s: 8192 })),
    ),
  ),
  ...[false, true].map((deterministic): FmhaBwdBenchShape => ({
    dtype: 'fp16',
    b: FMHA_BWD_VARLEN_SEQLENS.length,
    h: 16,
    d: 128,
    causal: true,
    deterministic,
    seqlens: FMHA_BWD_VARLEN_SEQLENS,
  })),
]);

/** The layout of a shape's tensor files: varlen for ragged batches, else bhsd. */
export function fmhaBwdFileLayout(s: FmhaBwdBenchShape): AttentionFileLayout {
  return s.seqlens !== undefined ? 'varlen' : 'bhsd';
}

/** attention_bwd's tensors: inputs q, k, v, do (in o's shape) and outputs dq, dk, dv (in q's, k's, v's shapes). */
export type FmhaBwdTensorFiles = Readonly<Record<'q' | 'k' | 'v' | 'do' | 'dq' | 'dk' | 'dv', AttentionTensorFile>>;

/** The tensors of a shape, all alike here (no GQA, dv = d). */
export function fmhaBwdTensorFiles(s: FmhaBwdBenchShape): FmhaBwdTensorFiles {
  const rows = s.seqlens !== undefined ? s.seqlens.reduce((a, n) => a + n, 0) : s.s!;
  const file = attentionTensorFile(fmhaBwdFileLayout(s), s.dtype, { batch: s.b, heads: s.h, rows, hdim: s.d });
  return { q: file, k: file, v: file, do: file, dq: file, dk: file, dv: file };
}

/**
 * attention_bwd's params of a shape (REFERENCE_OPS.md): dtype, b, h, hk, d, dv, causal, and sq, sk,
 * layout (bhsd), or for varlen `seqlens` (q = k lengths; the files' layout is fixed).
 */
export function fmhaBwdReferenceParams(s: FmhaBwdBenchShape): Readonly<Record<string, unknown>> {
  const common = { dtype: s.dtype, b: s.b, h: s.h, hk: s.h, d: s.d, dv: s.d, causal: s.causal };
  if (s.seqlens !== undefined) return { ...common, seqlens: [...s.seqlens] };
  return { ...common, sq: s.s!, sk: s.s!, layout: fmhaBwdFileLayout(s) };
}

/** Our flat params of a shape for the result JSON (varlen seqlens comma-joined). */
function fmhaBwdRecordParams(s: FmhaBwdBenchShape): Readonly<Record<string, string | number | boolean>> {
  const common = { dtype: s.dtype, b: s.b, h: s.h, d: s.d, causal: s.causal, deterministic: s.deterministic };
  return s.seqlens !== undefined ? { ...common, seqlens: s.seqlens.join(',') } : { ...common, s: s.s! };
}

/** A case of the suite: what the harness runs, and the shape it is made from. */
export interface FmhaBwdBenchCase extends SuiteCase {
  readonly shape: FmhaBwdBenchShape;
}

/** The case of a shape: named, seeded by its name, dQ/dK/dV judged at the input dtype against the SDPA backends' errors. */
export function fmhaBwdBenchCase(s: FmhaBwdBenchShape): FmhaBwdBenchCase {
  const name = fmhaBwdBenchName(s);
  return {
    name,
    params: fmhaBwdRecordParams(s),
    reference: { op: 'attention_bwd', params: fmhaBwdReferenceParams(s) },
    // The atomic and deterministic forms of a shape share inputs, so their cost compares on the same data.
    seed: caseSeed(name.replace(/_det$/, '')),
    precision: { dq: s.dtype, dk: s.dtype, dv: s.dtype },
    errorBaselines: s.seqlens !== undefined ? SDPA_VARLEN_ERROR_BASELINES : SDPA_ERROR_BASELINES,
    shape: s,
  };
}

/** Every case of the suite, in order. */
export const FMHA_BWD_BENCH_CASES: readonly FmhaBwdBenchCase[] = Object.freeze(FMHA_BWD_BENCH_SHAPES.map(fmhaBwdBenchCase));
