import { Prng } from '@tilekit/host';
import { roundTo } from '@tilekit/numeric';
import { describe, expect, it } from 'vitest';
import {
  checkDsaSparseMlaAttnSink,
  checkDsaSparseMlaDecodeConfig,
  checkDsaSparseMlaIndices,
  checkDsaSparseMlaPrefillConfig,
  checkDsaSparseMlaTopkLength,
} from '../checkDsaSparseMlaConfig.ts';
import { DsaArgumentError } from '../dsaArgumentError.ts';
import { dsaSparseMlaPrefillReference } from '../reference/dsaSparseMlaReference.ts';
import { DSA_SPARSE_MLA_DECODE_GPU_CASES, DSA_SPARSE_MLA_PREFILL_GPU_CASES } from './dsaSparseMlaGpuCases.ts';
import { dsaRandomSparseMlaDecodeInput, dsaRandomSparseMlaPrefillInput, dsaRandomSparseMlaRows } from './dsaSparseMlaInputs.ts';

const DQK = 576;

const isBf16 = (a: Float32Array): boolean => a.every((v) => roundTo('bf16', v) === v);

function rowsOf(indices: Int32Array, topk: number): number[][] {
  return Array.from({ length: indices.length / topk }, (_, r) => Array.from(indices.subarray(r * topk, (r + 1) * topk)));
}

describe('dsaRandomSparseMlaRows', () => {
  it('bf16 values, deterministic per seed, magnitudes near the factor range', () => {
    const a = dsaRandomSparseMlaRows(64, new Prng(1));
    expect(a).toEqual(dsaRandomSparseMlaRows(64, new Prng(1)));
    expect(a).not.toEqual(dsaRandomSparseMlaRows(64, new Prng(2)));
    expect(isBf16(a)).toBe(true);
    for (let r = 0; r < 64; r++) {
      const rms = Math.sqrt(a.subarray(r * DQK, (r + 1) * DQK).reduce((s, v) => s + v * v, 0) / DQK);
      expect(rms).toBeGreaterThan(0.6);
      expect(rms).toBeLessThan(1.6);
    }
  });
});

describe('dsaRandomSparseMlaPrefillInput', () => {
  const x = dsaRandomSparseMlaPrefillInput(
    { sQ: 32, hQ: 64, sKv: 300, topk: 128, invalidRate: 0.2, duplicateRate: 0.1, topkLength: true, sink: true },
    new Prng(3),
  );

  it('has the shapes and checks of a valid call, bf16 q and kv', () => {
    expect([x.q.length, x.kv.length]).toEqual([32 * 64 * DQK, 300 * DQK]);
    expect(isBf16(x.q) && isBf16(x.kv)).toBe(true);
    checkDsaSparseMlaIndices(x.indices, 32, 128);
    checkDsaSparseMlaTopkLength(x.topkLength, 32, 128);
    checkDsaSparseMlaAttnSink(x.attnSink, 64);
    expect(x.smScale).toBe(0.135234);
  });

  it('draws every kind of invalid entry, duplicates, topk_length 0 and full, and −∞ sinks', () => {
    const all = Array.from(x.indices);
    for (const bad of [-1, -(2 ** 31), 300, 2 ** 31 - 1]) expect(all).toContain(bad);
    expect(all.some((i) => i > 300 && i < 1301)).toBe(true);
    expect(
      rowsOf(x.indices, 128).some(
        (row) => new Set(row.filter((i) => i >= 0 && i < 300)).size < row.filter((i) => i >= 0 && i < 300).length,
      ),
    ).toBe(true);
    expect(Array.from(x.topkLength!)).toContain(0);
    expect(Array.from(x.topkLength!)).toContain(128);
    expect(x.attnSink![7]).toBe(Number.NEGATIVE_INFINITY);
  });

  it('without duplicates, the valid entries of a row are distinct; topk past sKv pads with invalid entries', () => {
    const y = dsaRandomSparseMlaPrefillInput({ sQ: 8, hQ: 64, sKv: 50, topk: 80, invalidRate: 0.1 }, new Prng(4));
    for (const row of rowsOf(y.indices, 80)) {
      const valid = row.filter((i) => i >= 0 && i < 50);
      expect(new Set(valid).size).toBe(valid.length);
      expect(row.slice(50).every((i) => i < 0 || i >= 50)).toBe(true);
    }
  });

  it('empty rows: all invalid without topk_length, length 0 with it', () => {
    const y = dsaRandomSparseMlaPrefillInput({ sQ: 40, hQ: 64, sKv: 100, topk: 16, emptyRowRate: 0.5 }, new Prng(5));
    const empty = rowsOf(y.indices, 16).filter((row) => row.every((i) => i < 0 || i >= 100)).length;
    expect(empty).toBeGreaterThan(5);
    expect(dsaSparseMlaPrefillReference(y).lse).toContain(Number.POSITIVE_INFINITY);
  });

  it('softmax is neither uniform nor one-hot: per-row max weight e^{max − lse} mostly in (2/n, 0.99)', () => {
    const y = dsaRandomSparseMlaPrefillInput({ sQ: 4, hQ: 64, sKv: 2000, topk: 512, invalidRate: 0 }, new Prng(6));
    const r = dsaSparseMlaPrefillReference(y);
    const top = Array.from(r.lse, (lse, i) => Math.exp(r.maxLogits[i]! - lse));
    const middling = top.filter((p) => p > 2 / 512 && p < 0.99).length;
    expect(middling / top.length).toBeGreaterThan(0.8);
  });

  it('is deterministic per seed and rejects bad options', () => {
    const o = { sQ: 2, hQ: 64, sKv: 10, topk: 4 };
    expect(dsaRandomSparseMlaPrefillInput(o, new Prng(9))).toEqual(dsaRandomSparseMlaPrefillInput(o, new Prng(9)));
    expect(() => dsaRandomSparseMlaPrefillInput({ ...o, sKv: 0 }, new Prng(9))).toThrow(DsaArgumentError);
    expect(() => dsaRandomSparseMlaPrefillInput({ ...o, invalidRate: 2 }, new Prng(9))).toThrow(/invalidRate/);
  });
});

describe('dsaRandomSparseMlaDecodeInput', () => {
  it('slots in the cache or −1, topk_length per sequence, latent rows of every slot', () => {
    const { problem, latent, numPages } = dsaRandomSparseMlaDecodeInput(
      { b: 4, sQ: 2, hQ: 128, topk: 100, numPages: 3, invalidRate: 0.2, topkLength: true },
      new Prng(7),
    );
    expect(latent.length).toBe(numPages * 64 * DQK);
    expect(problem.q.length).toBe(4 * 2 * 128 * DQK);
    checkDsaSparseMlaIndices(problem.indices, 8, 100);
    checkDsaSparseMlaTopkLength(problem.topkLength, 4, 100);
    expect(problem.indices.every((i) => i === -1 || (i >= 0 && i < 192))).toBe(true);
    expect(Array.from(problem.indices)).toContain(-1);
  });
});

describe('the GPU cases', () => {
  it('have unique labels and pass the host checks; together cover the ragged features', () => {
    const labels = [...DSA_SPARSE_MLA_PREFILL_GPU_CASES, ...DSA_SPARSE_MLA_DECODE_GPU_CASES].map((c) => c.label);
    expect(new Set(labels).size).toBe(labels.length);
    for (const { options: o } of DSA_SPARSE_MLA_PREFILL_GPU_CASES)
      checkDsaSparseMlaPrefillConfig({
        ...o,
        dQk: 576,
        dV: 512,
        smScale: 0.135234,
        hasSink: o.sink ?? false,
        hasTopkLength: o.topkLength ?? false,
      });
    for (const { options: o } of DSA_SPARSE_MLA_DECODE_GPU_CASES)
      checkDsaSparseMlaDecodeConfig({
        ...o,
        pageStrideBytes: 41984,
        smScale: 0.135234,
        hasSink: o.sink ?? false,
        hasTopkLength: o.topkLength ?? false,
      });
    const prefill = DSA_SPARSE_MLA_PREFILL_GPU_CASES.map((c) => c.options);
    expect(new Set(prefill.map((o) => o.hQ))).toEqual(new Set([64, 128]));
    expect(prefill.some((o) => o.sKv % 64 !== 0 && o.topkLength && o.emptyRowRate)).toBe(true);
    expect(prefill.some((o) => o.sink) && prefill.some((o) => o.duplicateRate) && prefill.some((o) => o.topk > o.sKv)).toBe(true);
    expect(new Set(DSA_SPARSE_MLA_DECODE_GPU_CASES.map((c) => c.options.sQ))).toEqual(new Set([1, 2]));
  });

  it('draw without error (the smaller ones)', () => {
    for (const c of DSA_SPARSE_MLA_PREFILL_GPU_CASES.filter((c) => c.options.topk <= 256))
      expect(() => dsaRandomSparseMlaPrefillInput(c.options, new Prng(c.seed))).not.toThrow();
    for (const c of DSA_SPARSE_MLA_DECODE_GPU_CASES.filter((c) => c.options.topk <= 256))
      expect(() => dsaRandomSparseMlaDecodeInput(c.options, new Prng(c.seed))).not.toThrow();
  });
});
