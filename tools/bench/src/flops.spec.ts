import { describe, expect, it } from 'vitest';
import { attentionBackwardFlops, attentionForwardFlops, gbpsOf, gemmFlops, tflopsOf } from './flops.ts';

describe('FLOP rules of docs/benchmarks.md', () => {
  const base = { b: 2, h: 16, sq: 8192, sk: 8192, dQk: 128, causal: false };

  it('forward is 4·b·h·sq·sk·d when d_qk = d_v', () => {
    expect(attentionForwardFlops(base)).toBe(4 * 2 * 16 * 8192 * 8192 * 128);
  });

  it('uses 2·b·h·sq·sk·(d_qk + d_v) when they differ', () => {
    expect(attentionForwardFlops({ ...base, dV: 64 })).toBe(2 * 2 * 16 * 8192 * 8192 * 192);
  });

  it('halves causal only when sq = sk', () => {
    expect(attentionForwardFlops({ ...base, causal: true })).toBe(attentionForwardFlops(base) / 2);
    expect(attentionForwardFlops({ ...base, sq: 4096, causal: true })).toBe(attentionForwardFlops({ ...base, sq: 4096 }));
  });

  it('backward is 2.5 × forward; GEMM is 2·m·n·k', () => {
    expect(attentionBackwardFlops(base)).toBe(2.5 * attentionForwardFlops(base));
    expect(gemmFlops(8192, 8192, 8192)).toBe(2 * 8192 ** 3);
  });

  it('matches the torch anchor: 8192³ GEMM in 1.4872 ms is 739.3 TF/s', () => {
    expect(tflopsOf(gemmFlops(8192, 8192, 8192), 1.4872000217437744)).toBeCloseTo(739.3166, 3);
  });

  it('GB/s counts bytes read and written', () => {
    expect(gbpsOf(2 * 2 ** 30, 1)).toBeCloseTo(2147.48, 2);
  });
});
