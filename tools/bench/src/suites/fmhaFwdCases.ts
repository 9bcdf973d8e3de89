// The cases of the fmha-fwd benchmark suite (issue 7): the shapes, their names (the results history
// is keyed by them), our params, what the torch reference server's `attention_fwd` op runs for each
// (REFERENCE_OPS.md: bhsd files, varlen (Σs, h, d)), the seed of their inputs, how their output is
// judged, and the FLOPs both sides are credited with. The suite itself (running ours) lives in
// fmhaFwd.ts.
import type { SuiteCase } from '../benchSuite.ts';
import { attentionForwardFlops } from '../flops.ts';
import { SDPA_ERROR_BASELINES, SDPA_VARLEN_ERROR_BASELINES } from './attentionBaselines.ts';
import { attentionTensorFile, type AttentionFileLayout, type AttentionTensorFile } from './attentionFileLayout.ts';
import { caseSeed } from './caseSeed.ts';

/** One benchmarked attention forward. Causal is the mask where sq = sk (top-left = bottom-right there). */
export interface FmhaFwdBenchShape {
  readonly dtype: 'fp16' | 'bf16';
  readonly b: number;
  readonly h: number;
  readonly hk: number;
  readonly d: number;
  readonly dv: number;
  readonly causal: boolean;
  /** Batch mode: rows of Q and K/V per batch. */
  readonly sq?: number;
  readonly sk?: number;
  /** Group (varlen) mode: rows per batch (b entries each); sq/sk are then absent. */
  readonly seqlensQ?: readonly number[];
  readonly seqlensK?: readonly number[];
}

/** A varlen shape: its per-sequence lengths are present. */
type VarlenShape = FmhaFwdBenchShape & { readonly seqlensQ: readonly number[]; readonly seqlensK: readonly number[] };

function isVarlen(s: FmhaFwdBenchShape): s is VarlenShape {
  return s.seqlensQ !== undefined && s.seqlensK !== undefined;
}

/** A case of the suite: what the harness runs (reference op, seed, precision, error baselines), the shape it is made from and its FLOPs. */
export interface FmhaFwdBenchCase extends SuiteCase {
  readonly shape: FmhaFwdBenchShape;
  readonly flops: number;
}

/**
 * FLOPs by docs/benchmarks.md's rule, per sequence: 2·h·sq·sk·(d + dv), halved for causal when sq = sk;
 * summed over the batch (varlen: over its sequences).
 */
export function fmhaFwdBenchFlops(s: FmhaFwdBenchShape): number {
  if (isVarlen(s)) {
    return s.seqlensQ.reduce(
      (sum, sq, i) => sum + attentionForwardFlops({ b: 1, h: s.h, sq, sk: s.seqlensK[i]!, dQk: s.d, dV: s.dv, causal: s.causal }),
      0,
    );
  }
  return attentionForwardFlops({ b: s.b, h: s.h, sq: s.sq!, sk: s.sk!, dQk: s.d, dV: s.dv, causal: s.causal });
}

/**
 * `fmha_fwd_b2_h16_s8192_d128_causal_fp16`, `fmha_fwd_b2_h32_hk8_s8192_d128_fp16`,
 * `fmha_fwd_b4_h32_hk8_sq16_sk32768_d128_fp16`, `fmha_fwd_varlen8_h16_d128_fp16` — the names of
 * the recorded results (benchmarks/results/fmha-fwd.json), kept stable.
 */
export function fmhaFwdBenchName(s: FmhaFwdBenchShape): string {
  const heads = s.hk === s.h ? `h${s.h}` : `h${s.h}_hk${s.hk}`;
  const dims = s.dv === s.d ? `d${s.d}` : `d${s.d}_dv${s.dv}`;
  const seq = isVarlen(s) ? `varlen${s.b}_${heads}` : `b${s.b}_${heads}_${s.sq === s.sk ? `s${s.sq}` : `sq${s.sq}_sk${s.sk}`}`;
  return `fmha_fwd_${seq}_${dims}${s.causal ? '_causal' : ''}_${s.dtype}`;
}

/** The layout of a shape's tensor files: varlen for ragged batches, else bhsd (the layout the cases have always used). */
export function fmhaFwdFileLayout(s: FmhaFwdBenchShape): AttentionFileLayout {
  return isVarlen(s) ? 'varlen' : 'bhsd';
}

/** attention_fwd's tensors of a shape (REFERENCE_OPS.md): inputs q, k, v and output o, all in the shape's dtype. */
export function fmhaFwdTensorFiles(s: FmhaFwdBenchShape): Readonly<Record<'q' | 'k' | 'v' | 'o', AttentionTensorFile>> {
  const sum = (lengths: readonly number[]): number => lengths.reduce((a, n) => a + n, 0);
  const rowsQ = isVarlen(s) ? sum(s.seqlensQ) : s.sq!;
  const rowsK = isVarlen(s) ? sum(s.seqlensK) : s.sk!;
  const file = (heads: number, rows: number, hdim: number): AttentionTensorFile =>
    attentionTensorFile(fmhaFwdFileLayout(s), s.dtype, { batch: s.b, heads, rows, hdim });
  return { q: file(s.h, rowsQ, s.d), k: file(s.hk, rowsK, s.d), v: file(s.hk, rowsK, s.dv), o: file(s.h, rowsQ, s.dv) };
}

/**
 * attention_fwd's params of a shape (REFERENCE_OPS.md): dtype, b, h, hk, d, dv, causal, and
 * sq, sk, layout (bhsd), or for varlen seqlens_q, seqlens_k (their files' layout is fixed).
 */
export function fmhaFwdReferenceParams(s: FmhaFwdBenchShape): Readonly<Record<string, unknown>> {
  const common = { dtype: s.dtype, b: s.b, h: s.h, hk: s.hk, d: s.d, dv: s.dv, causal: s.causal };
  if (isVarlen(s)) return { ...common, seqlens_q: [...s.seqlensQ], seqlens_k: [...s.seqlensK] };
  return { ...common, sq: s.sq!, sk: s.sk!, layout: fmhaFwdFileLayout(s) };
}

/** Our flat params of a shape for the result JSON (varlen seqlens comma-joined). */
export function fmhaFwdRecordParams(s: FmhaFwdBenchShape): Readonly<Record<string, string | number | boolean>> {
  const common = { dtype: s.dtype, b: s.b, h: s.h, hk: s.hk, d: s.d, dv: s.dv, causal: s.causal };
  if (isVarlen(s)) return { ...common, seqlensQ: s.seqlensQ.join(','), seqlensK: s.seqlensK.join(',') };
  return { ...common, sq: s.sq!, sk: s.sk! };
}

/** The case of a shape: named, seeded by its name, O judged at the input dtype against the SDPA backends' errors. */
export function fmhaFwdBenchCase(s: FmhaFwdBenchShape): FmhaFwdBenchCase {
  const name = fmhaFwdBenchName(s);
  return {
    name,
    params: fmhaFwdRecordParams(s),
    reference: { op: 'attention_fwd', params: fmhaFwdReferenceParams(s) },
    seed: caseSeed(name),
    precision: { o: s.dtype },
    errorBaselines: isVarlen(s) ? SDPA_VARLEN_ERROR_BASELINES : SDPA_ERROR_BASELINES,
    shape: s,
    flops: fmhaFwdBenchFlops(s),
  };
}

const square = (dtype: 'fp16' | 'bf16', s: number, d: number, causal: boolean, h = 16, hk = h): FmhaFwdBenchShape => ({
  dtype,
  b: 2,
  h,
  hk,
  d,
  dv: d,
  causal,
  sq: s,
  sk: s,
});

/** Ragged sequence lengths of the varlen case: long and short, odd, a single row (CK-style `-s=1,17,259,4097`). */
export const FMHA_FWD_VARLEN_SEQLENS: readonly number[] = Object.freeze([8192, 4097, 2048, 1000, 259, 17, 1, 4096]);

/**
 * The issue's benchmark shapes: b=2 h=16 s=8192 with d ∈ {64, 128, 256} × {non-causal, causal} ×
 * {fp16, bf16} (the acceptance set); b=2 h=16 s=16384 d=128; GQA h=32 h_k=8 d=128 at s=8192; one
 * varlen batch of 8 ragged sequences (h=16, d=128); decode-like sq ∈ {1, 16, 64} over sk=32768
 * (b=4, h=32, h_k=8, d=128, no mask: every query sees the whole cache).
 */
export const FMHA_FWD_BENCH_SHAPES: readonly FmhaFwdBenchShape[] = Object.freeze([
  ...(['fp16', 'bf16'] as const).flatMap((dtype) =>
    [64, 128, 256].flatMap((d) => [false, true].map((causal) => square(dtype, 8192, d, causal))),
  ),
  square('fp16', 16384, 128, false),
  square('fp16', 16384, 128, true),
  square('fp16', 8192, 128, false, 32, 8),
  square('fp16', 8192, 128, true, 32, 8),
  ...[false, true].map((causal): FmhaFwdBenchShape => ({
    dtype: 'fp16',
    b: FMHA_FWD_VARLEN_SEQLENS.length,
    h: 16,
    hk: 16,
    d: 128,
    dv: 128,
    causal,
    seqlensQ: FMHA_FWD_VARLEN_SEQLENS,
    seqlensK: FMHA_FWD_VARLEN_SEQLENS,
  })),
  ...[1, 16, 64].map((sq): FmhaFwdBenchShape => ({ dtype: 'fp16', b: 4, h: 32, hk: 8, d: 128, dv: 128, causal: false, sq, sk: 32768 })),
]);

/** Every case of the suite, in order. */
export const FMHA_FWD_BENCH_CASES: readonly FmhaFwdBenchCase[] = Object.freeze(FMHA_FWD_BENCH_SHAPES.map(fmhaFwdBenchCase));
