import fc from 'fast-check';
import { spargeBlockMapReference, spargeMaskedAttentionReference, spargeSyntheticInputs } from '@tilekit/kernel-sparge';
import { encodeArray } from '@tilekit/numeric';
import { describe, expect, it } from 'vitest';
import { parseBenchResult } from '../benchResult.ts';
import { attentionForwardFlops } from '../flops.ts';
import {
  rotateRows,
  SPARGE_BENCH_CASES,
  SPARGE_BENCH_TOPKS,
  spargeBenchCase,
  spargeCheckedHeads,
  spargeHeadRotation,
  spargeMaskedRow,
  spargeOurMeasurement,
  validateSparge,
  type SpargeBenchSpec,
} from './sparge.ts';

describe('sparge bench cases', () => {
  const names = SPARGE_BENCH_CASES.map((c) => c.name);

  it("cover the issue's sweep, PV modes, int8 and causal with unique names, ordered by sequence length", () => {
    expect(new Set(names).size).toBe(names.length);
    for (const s of [8192, 16384, 32768]) for (const topk of SPARGE_BENCH_TOPKS) expect(names).toContain(`sparge_b2_h16_s${s}_d128_topk${topk}_fp16`);
    for (const mode of ['none', 'warp', 'block']) expect(names).toContain(`sparge_b2_h16_s16384_d128_topk0.5_pv-${mode}8_fp16`);
    for (const topk of [0.4, 0.1]) expect(names).toContain(`sparge_b2_h16_s16384_d128_topk${topk}_int8_fp16`);
    expect(names).toContain('sparge_b2_h16_s16384_d128_topk0.4_causal_fp16');
    const lengths = SPARGE_BENCH_CASES.map((c) => c.spec.s);
    expect(lengths).toEqual([...lengths].sort((a, b) => a - b));
    for (const c of SPARGE_BENCH_CASES) {
      expect(c.params['int8']).toBe(c.spec.int8);
      expect(c.torch).toEqual({ op: 'fmha_fwd', params: { dtype: 'fp16', b: 2, h: 16, hk: 16, d: 128, dv: 128, causal: c.spec.causal, sq: c.spec.s, sk: c.spec.s, layout: 'bhsd', seed: 1 } });
    }
  });

  it('credits the dense-equivalent FLOPs: 4·b·h·s²·d, halved for causal', () => {
    const dense = SPARGE_BENCH_CASES.find((c) => c.name === 'sparge_b2_h16_s32768_d128_topk0.1_fp16')!;
    expect(dense.flops).toBe(4 * 2 * 16 * 32768 * 32768 * 128);
    const causal = SPARGE_BENCH_CASES.find((c) => c.spec.causal)!;
    expect(causal.flops).toBe((4 * 2 * 16 * 16384 * 16384 * 128) / 2);
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 4 }), fc.integer({ min: 1, max: 32 }), fc.integer({ min: 1, max: 4096 }), fc.boolean(), (b, h, s, causal) => {
        const spec: SpargeBenchSpec = { b, h, s, d: 64, topk: 0.5, causal, int8: false, pvMode: 'none', pvThreshold: 50 };
        expect(spargeBenchCase(spec).flops).toBe(attentionForwardFlops({ b, h, sq: s, sk: s, dQk: 64, causal }));
      }),
    );
  });
});

describe('sparge measurement', () => {
  it('speedups are dense / ours, the map fraction is map / dense, TFLOP/s dense-equivalent', () => {
    fc.assert(
      fc.property(fc.double({ min: 0.01, max: 100, noNaN: true }), fc.double({ min: 0, max: 10, noNaN: true }), fc.double({ min: 0.01, max: 100, noNaN: true }), (attentionMs, blockMapMs, denseMs) => {
        const totalMs = attentionMs + Math.max(blockMapMs, 0.001);
        const m = spargeOurMeasurement(1e12, { attentionMs, blockMapMs: Math.max(blockMapMs, 0.001), totalMs, denseMs }, { instance: 'i', denseInstance: 'd', achievedSparsity: 0.5, pvComputed: 1, pvSkipped: 0 });
        expect(m.speedupVsDense).toBeCloseTo(denseMs / attentionMs, 10);
        expect(m.totalSpeedupVsDense).toBeLessThanOrEqual(m.speedupVsDense);
        expect(m.blockMapFraction * denseMs).toBeCloseTo(m.blockMapMs, 10);
        expect(m.tflops! * attentionMs).toBeCloseTo(1e3, 6);
      }),
    );
  });

  it('a case with its extra figures and the ours-dense baseline passes the result format', () => {
    const c = SPARGE_BENCH_CASES[0]!;
    const ours = spargeOurMeasurement(c.flops, { attentionMs: 0.2, blockMapMs: 0.02, totalMs: 0.23, denseMs: 0.5 }, { instance: 'sparge_vsa', denseInstance: 'fmha_fwd', achievedSparsity: 0.87, pvComputed: 10, pvSkipped: 2 });
    const result = {
      suite: 'sparge',
      device: 'NVIDIA H200',
      date: '2026-11-22',
      commit: 'abc',
      cases: [{ name: c.name, params: c.params, ours, baselines: { 'ours-dense': { ms: 0.5, tflops: c.flops / 0.5 / 1e9 }, 'torch-flash': { error: 'No available kernel' } }, valid: true, maxAbsErr: 1e-3 }],
    };
    expect(parseBenchResult(JSON.parse(JSON.stringify(result)))).toEqual(result);
    expect(Object.keys(ours)).toEqual(expect.arrayContaining(['blockMapMs', 'totalMs', 'blockMapFraction', 'speedupVsDense', 'totalSpeedupVsDense', 'achievedSparsity', 'pvComputed', 'pvSkipped']));
  });
});

describe('sparge inputs and references', () => {
  it('rotateRows is a row rotation: rotations compose and a full turn is the identity', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 20 }), fc.integer({ min: 1, max: 4 }), fc.nat(), fc.nat(), (rows, d, a, b) => {
        const x = Float32Array.from({ length: rows * d }, (_, i) => i);
        const ra = a % rows;
        const rb = b % rows;
        expect(rotateRows(rotateRows(x, ra, d), rb, d)).toEqual(rotateRows(x, (ra + rb) % rows, d));
        expect(rotateRows(x, ra, d)[0]).toBe(ra * d);
      }),
    );
    expect(spargeHeadRotation(3, 8192, 32)).toBe(768);
    expect(spargeCheckedHeads(32)).toEqual([0, 17, 31]);
    expect(spargeCheckedHeads(1)).toEqual([0]);
  });

  it('spargeMaskedRow equals the masked reference row by row (causal or not)', () => {
    const s = 300;
    const d = 64;
    const x = spargeSyntheticInputs({ batch: 1, nhead: 1, seqlenQ: s, seqlenK: s, headDim: d }, { seed: 5 });
    fc.assert(
      fc.property(fc.boolean(), fc.integer({ min: 0, max: s - 1 }), fc.uint8Array({ minLength: 9, maxLength: 9 }), (causal, row, bits) => {
        const map = Uint8Array.from({ length: 3 * 5 }, (_, n) => bits[n % 9]! & 1);
        const ref = spargeMaskedAttentionReference({ shape: { batch: 1, nhead: 1, seqlenQ: s, seqlenK: s, headDim: d }, q: x.q, k: x.k, v: x.v, blockQ: 128, blockK: 64, blocks: { batch: 1, nhead: 1, qBlocks: 3, kBlocks: 5, map }, isCausal: causal });
        const i = Math.floor(row / 128);
        const got = spargeMaskedRow(x.q.subarray(row * d, (row + 1) * d), x.k, x.v, map.subarray(i * 5, (i + 1) * 5), row, { s, d, blockK: 64, causal, scale: 1 / Math.sqrt(d) });
        for (let e = 0; e < d; e++) expect(got[e]).toBeCloseTo(ref.o[row * d + e]!, 9);
      }),
      { numRuns: 20 },
    );
  });
});

describe('validateSparge', () => {
  // A small run made on the CPU: the reference map per head (rotated slice) and the masked O in fp16.
  const spec: SpargeBenchSpec = { b: 1, h: 2, s: 384, d: 64, topk: 0.5, causal: true, int8: false, pvMode: 'none', pvThreshold: 50 };
  const { s, d } = spec;
  const heads = spec.b * spec.h;
  const slice = spargeSyntheticInputs({ batch: 1, nhead: 1, seqlenQ: s, seqlenK: s, headDim: d }, { seed: 1 });
  const nB = 3;
  const map = new Uint8Array(heads * nB * nB);
  const lut = new Int32Array(heads * nB * nB);
  const validBlockNum = new Int32Array(heads * nB);
  const o = new Uint16Array(heads * s * d);
  for (let bh = 0; bh < heads; bh++) {
    const rot = spargeHeadRotation(bh, s, heads);
    const [q, k, v] = [slice.q, slice.k, slice.v].map((x) => rotateRows(x, rot, d));
    const shape = { batch: 1, nhead: 1, seqlenQ: s, seqlenK: s, headDim: d };
    const ref = spargeBlockMapReference({ shape, q: q!, k: k!, params: { topk: spec.topk, isCausal: true, blockQ: 128, blockK: 128 } });
    map.set(ref.blockMap.map, bh * nB * nB);
    lut.set(ref.lut.lut, bh * nB * nB);
    validBlockNum.set(ref.lut.validBlockNum, bh * nB);
    const att = spargeMaskedAttentionReference({ shape, q: q!, k: k!, v: v!, blockQ: 128, blockK: 128, blocks: ref.blockMap, isCausal: true });
    o.set(encodeArray('fp16', att.o) as Uint16Array, bh * s * d);
  }
  const scale = 1 / Math.sqrt(d);

  it('accepts a correct run and checks both stages', () => {
    const v = validateSparge(spec, scale, slice, { map, lut, validBlockNum }, o, undefined);
    expect(v.first).toBe('');
    expect(v.valid).toBe(true);
    expect(v.maxAbsErr).toBeLessThan(1e-2);
    expect(v.note).toMatch(/block map: 6 rows of 2 heads/);
  });

  it('rejects a wrong O element and a wrong map row', () => {
    const badO = o.slice();
    badO[(1 * s + (s - 1)) * d + 5] = encodeArray('fp16', [7])[0]!;
    expect(validateSparge(spec, scale, slice, { map, lut, validBlockNum }, badO, undefined).first).toMatch(/^O\[head 1 row 383 d5\]/);
    const badMap = map.slice();
    const badLut = lut.slice();
    const badValid = validBlockNum.slice();
    // Head 0, query block 2 visits only key block 0.
    badMap.set([1, 0, 0], 2 * nB);
    badLut.set([0, 0, 0], 2 * nB);
    badValid[2] = 1;
    const v = validateSparge(spec, scale, slice, { map: badMap, lut: badLut, validBlockNum: badValid }, o, undefined);
    expect(v.valid).toBe(false);
    expect(v.first).toMatch(/^block map head 0/);
  });

  it('at topk 1 compares every element with our dense O', () => {
    const full: SpargeBenchSpec = { ...spec, topk: 1, causal: false };
    const dense = o.slice();
    dense[17] = encodeArray('fp16', [5])[0]!;
    const v = validateSparge(full, scale, slice, { map, lut, validBlockNum }, o, dense);
    expect(v.valid).toBe(false);
    expect(v.note).toMatch(/vs our dense O: [1-9]\d* outside/);
  });
});
