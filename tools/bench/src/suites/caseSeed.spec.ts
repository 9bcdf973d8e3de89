import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { caseSeed, MAX_CASE_SEED } from './caseSeed.ts';

describe('caseSeed', () => {
  it('is pinned: FNV-1a test vectors ("" → 0x811c9dc5, "a" → 0xe40c292c) folded into [1, 2^31 − 1]; a recorded case keeps its seed', () => {
    expect(caseSeed('')).toBe((0x811c9dc5 % MAX_CASE_SEED) + 1);
    expect(caseSeed('a')).toBe((0xe40c292c % MAX_CASE_SEED) + 1);
    expect(caseSeed('gemm_fp16_4097x4095x4100')).toBe(1843391981);
  });

  test.prop([fc.string()])('lies in [1, MAX_CASE_SEED]', (name) => {
    const seed = caseSeed(name);
    expect(Number.isSafeInteger(seed)).toBe(true);
    expect(seed).toBeGreaterThanOrEqual(1);
    expect(seed).toBeLessThanOrEqual(MAX_CASE_SEED);
  });

  it('tells names apart that differ in one character', () => {
    expect(caseSeed('gemm_fp16_4096x4096x4096_nn')).not.toBe(caseSeed('gemm_fp16_4096x4096x4096_nt'));
  });
});
