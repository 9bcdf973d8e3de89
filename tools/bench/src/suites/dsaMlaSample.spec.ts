import { Prng } from '@tilekit/host';
import {
  dsaBf16Bits,
  dsaMlaCacheRowReader,
  dsaRandomSparseMlaDecodeInput,
  dsaRandomSparseMlaPrefillInput,
  dsaSparseMlaDecodeCache,
  dsaSparseMlaDecodeReference,
  dsaSparseMlaPrefillReference,
  type DsaSparseMlaPrefillInput,
  type DsaSparseMlaResult,
} from '@tilekit/kernel-dsa';
import { describe, expect, it } from 'vitest';
import {
  dsaMlaDecodeSampleCheck,
  dsaMlaSampleCheck,
  dsaMlaSampledOutputs,
  dsaMlaSampleQueries,
  dsaMlaSubproblem,
  type DsaMlaDecodeHost,
  type DsaMlaPrefillHost,
} from './dsaMlaSample.ts';

/** float32 values rounded to bf16 bit patterns (nearest even), as the kernel stores out. */
function bf16Round(values: Float32Array): Uint16Array {
  const words = new Uint32Array(Float32Array.from(values).buffer);
  return Uint16Array.from(words, (w) => (w + 0x7fff + ((w >>> 16) & 1)) >>> 16);
}

function hostOf(x: DsaSparseMlaPrefillInput): DsaMlaPrefillHost {
  return {
    sQ: x.sQ,
    hQ: x.hQ,
    sKv: x.sKv,
    topk: x.topk,
    smScale: x.smScale,
    q: dsaBf16Bits(x.q),
    kv: dsaBf16Bits(x.kv),
    indices: x.indices,
  };
}

const asOurs = (r: DsaSparseMlaResult) => ({ out: bf16Round(r.out), lse: r.lse, maxLogits: r.maxLogits });

describe('the sampled check of a sparse MLA prefill', () => {
  // Invalid entries of every kind (−1, past sKv, other negatives) besides the bench's all-valid rows.
  const x = dsaRandomSparseMlaPrefillInput({ sQ: 20, hQ: 64, sKv: 500, topk: 48, invalidRate: 0.1 }, new Prng(0x21_05));
  const host = hostOf(x);
  const full = dsaSparseMlaPrefillReference(x);

  it('samples 8 queries spread over s_q with the first and the last (all of them when fewer)', () => {
    expect(dsaMlaSampleQueries(4096)).toEqual([0, 585, 1170, 1755, 2340, 2925, 3510, 4095]);
    expect(dsaMlaSampleQueries(20)).toEqual([0, 3, 5, 8, 11, 14, 16, 19]);
    expect(dsaMlaSampleQueries(5)).toEqual([0, 1, 2, 3, 4]);
  });

  it("cuts the sampled queries out over a compact kv of the tokens they name: its outputs are the full problem's there", () => {
    const queries = [3, 0, 19];
    const sub = dsaMlaSubproblem(host, queries);
    const named = new Set(queries.flatMap((t) => [...x.indices.subarray(t * 48, (t + 1) * 48)].filter((i) => i >= 0 && i < 500)));
    expect(sub.sKv).toBe(named.size);
    expect([sub.sQ, sub.hQ, sub.topk, sub.smScale]).toEqual([3, 64, 48, x.smScale]);
    expect([...sub.indices].every((i) => i >= -1 && i < sub.sKv)).toBe(true);
    const got = dsaSparseMlaPrefillReference(sub);
    const want = dsaMlaSampledOutputs(asOurs(full), 64, queries);
    expect(bf16Round(got.out)).toEqual(want.out);
    expect(got.lse).toEqual(want.lse);
    expect(got.maxLogits).toEqual(want.maxLogits);
  });

  it('passes the reference rounded as the kernel stores it', () => {
    const check = dsaMlaSampleCheck(host, asOurs(full));
    expect(check.ok, check.detail).toBe(true);
    expect(check.detail).toMatch(
      /^queries 0,3,5,8,11,14,16,19 × 64 heads vs the float64 CPU reference: out 0\/262144 over .*; lse 0\/512 over .*; max 0\/512 over/,
    );
  });

  it('fails a dropped token of a sampled query, swapped heads and a wrong sm_scale', () => {
    const indices = Int32Array.from(x.indices);
    const j = indices.subarray(5 * 48, 6 * 48).findIndex((i) => i >= 0 && i < 500);
    indices[5 * 48 + j] = -1;
    const dropped = dsaSparseMlaPrefillReference({ ...x, indices });
    expect(dsaMlaSampleCheck(host, asOurs(dropped)).ok).toBe(false);
    const swapped = asOurs(full);
    const head = (h: number) => swapped.out.slice((8 * 64 + h) * 512, (8 * 64 + h + 1) * 512);
    const [a, b] = [head(0), head(1)];
    swapped.out.set(b, 8 * 64 * 512);
    swapped.out.set(a, (8 * 64 + 1) * 512);
    expect(dsaMlaSampleCheck(host, swapped).ok).toBe(false);
    expect(dsaMlaSampleCheck(host, asOurs(dsaSparseMlaPrefillReference({ ...x, smScale: x.smScale * 1.01 }))).ok).toBe(false);
  });

  it('refuses a sampled query outside the problem', () => {
    expect(() => dsaMlaSubproblem(host, [20])).toThrow(RangeError);
  });
});

describe('dsaMlaDecodeSampleCheck', () => {
  const x = dsaRandomSparseMlaDecodeInput({ b: 5, sQ: 2, hQ: 64, topk: 40, numPages: 3, invalidRate: 0.1 }, new Prng(41));
  const cache = dsaSparseMlaDecodeCache(x);
  const host: DsaMlaDecodeHost = { ...x.problem, q: dsaBf16Bits(x.problem.q), cache };
  const r = dsaSparseMlaDecodeReference({ ...x.problem, readRow: dsaMlaCacheRowReader(cache) });
  const ours = { out: bf16Round(r.out), lse: r.lse, maxLogits: r.maxLogits };

  it('passes the float64 reference over the dequantized cache (lse and max logits in the [b][h_q][s_q] layout)', () => {
    const v = dsaMlaDecodeSampleCheck(host, ours);
    expect(v.ok, v.detail).toBe(true);
    expect(v.detail).toContain('query rows 0,');
  });

  it('fails a wrong lse of a sampled row and head, and the lse of another layout', () => {
    const lse = r.lse.slice();
    lse[3]! += 0.25;
    expect(dsaMlaDecodeSampleCheck(host, { ...ours, lse }).ok).toBe(false);
    const rowMajor = Float32Array.from(
      { length: r.lse.length },
      (_, k) => r.lse[(Math.floor(k / 64) % 2) + 2 * (k % 64) + 128 * Math.floor(k / 128)]!,
    );
    expect(dsaMlaDecodeSampleCheck(host, { ...ours, lse: rowMajor }).ok).toBe(false);
  });
});
