/**
 * FLOP counts by the rules of docs/benchmarks.md (FLOPs), so every suite reports comparable TFLOP/s.
 */
export interface AttentionShape {
  readonly b: number;
  readonly h: number;
  readonly sq: number;
  readonly sk: number;
  readonly dQk: number;
  readonly dV?: number;
  readonly causal: boolean;
}

/** Forward: 2·b·h·sq·sk·(d_qk + d_v) (= 4·b·h·sq·sk·d when equal), halved for causal when sq = sk. */
export function attentionForwardFlops(s: AttentionShape): number {
  const flops = 2 * s.b * s.h * s.sq * s.sk * (s.dQk + (s.dV ?? s.dQk));
  return s.causal && s.sq === s.sk ? flops / 2 : flops;
}

/** Backward = 2.5 × forward. */
export function attentionBackwardFlops(s: AttentionShape): number {
  return 2.5 * attentionForwardFlops(s);
}

export function gemmFlops(m: number, n: number, k: number): number {
  return 2 * m * n * k;
}

export function tflopsOf(flops: number, ms: number): number {
  return flops / ms / 1e9;
}

/** Bandwidth in GB/s (10^9 bytes) for `bytesMoved` (read + written) in `ms`. */
export function gbpsOf(bytesMoved: number, ms: number): number {
  return bytesMoved / ms / 1e6;
}
