// The cases of the fmha-fwd benchmark suite (issue 7): the shapes, our parameters, what
// torch_reference.py's `fmha_fwd` op times for each, and the FLOPs both sides are credited with.
// The suite itself (running ours) lives in fmhaFwd.ts.
import { attentionForwardFlops } from '../flops.ts';

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

/** A case as the suite will register it: `torch.op` is `fmha_fwd` (see torch_reference.py's run_fmha_fwd). */
export interface FmhaFwdBenchCase {
  readonly name: string;
  readonly shape: FmhaFwdBenchShape;
  /** Flat parameters for the result JSON (varlen seqlens comma-joined). */
  readonly params: Readonly<Record<string, string | number | boolean>>;
  readonly torch: { readonly op: 'fmha_fwd'; readonly params: Readonly<Record<string, unknown>> };
  readonly flops: number;
}

/**
 * FLOPs by docs/benchmarks.md's rule, per sequence: 2·h·sq·sk·(d + dv), halved for causal when sq = sk;
 * summed over the batch (varlen: over its sequences).
 */
export function fmhaFwdBenchFlops(s: FmhaFwdBenchShape): number {
  if (s.seqlensQ !== undefined && s.seqlensK !== undefined) {
    return s.seqlensQ.reduce(
      (sum, sq, i) => sum + attentionForwardFlops({ b: 1, h: s.h, sq, sk: s.seqlensK![i]!, dQk: s.d, dV: s.dv, causal: s.causal }),
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
  const seq = s.seqlensQ !== undefined ? `varlen${s.b}_${heads}` : `b${s.b}_${heads}_${s.sq === s.sk ? `s${s.sq}` : `sq${s.sq}_sk${s.sk}`}`;
  return `fmha_fwd_${seq}_${dims}${s.causal ? '_causal' : ''}_${s.dtype}`;
}

/** The case of a shape: our flat params and torch's `fmha_fwd` params (bhsd, seeded). */
export function fmhaFwdBenchCase(s: FmhaFwdBenchShape): FmhaFwdBenchCase {
  const varlen = s.seqlensQ !== undefined && s.seqlensK !== undefined;
  const common = { dtype: s.dtype, b: s.b, h: s.h, hk: s.hk, d: s.d, dv: s.dv, causal: s.causal };
  const params = varlen
    ? { ...common, seqlensQ: s.seqlensQ!.join(','), seqlensK: s.seqlensK!.join(',') }
    : { ...common, sq: s.sq!, sk: s.sk! };
  const torchParams = varlen
    ? { ...common, seqlens_q: [...s.seqlensQ!], seqlens_k: [...s.seqlensK!], seed: 1 }
    : { ...common, sq: s.sq!, sk: s.sk!, layout: 'bhsd', seed: 1 };
  return { name: fmhaFwdBenchName(s), shape: s, params, torch: { op: 'fmha_fwd', params: torchParams }, flops: fmhaFwdBenchFlops(s) };
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
