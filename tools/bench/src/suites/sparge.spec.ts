import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { spargeSyntheticInputs } from '@tilekit/kernel-sparge';
import { encodeArray } from '@tilekit/numeric';
import { afterAll, describe, expect, it } from 'vitest';
import { attentionForwardFlops } from '../flops.ts';
import { spargeProblemOf, spargeSuite } from './sparge.ts';
import { SPARGE_BENCH_CASES, SPARGE_BENCH_TOPKS, spargeBenchCase, type SpargeBenchSpec } from './spargeBenchCases.ts';
import { rotateRows, SPARGE_INPUT_SEED, spargeHeadRotation } from './spargeInputs.ts';

describe('sparge bench cases', () => {
  const names = SPARGE_BENCH_CASES.map((c) => c.name);

  it("cover the issue's sweep, PV modes, int8 and causal with unique names, ordered by sequence length", () => {
    expect(new Set(names).size).toBe(names.length);
    for (const s of [8192, 16384, 32768])
      for (const topk of SPARGE_BENCH_TOPKS) expect(names).toContain(`sparge_b2_h16_s${s}_d128_topk${topk}_fp16`);
    for (const mode of ['none', 'warp', 'block']) expect(names).toContain(`sparge_b2_h16_s16384_d128_topk0.5_pv-${mode}8_fp16`);
    for (const topk of [0.4, 0.1]) expect(names).toContain(`sparge_b2_h16_s16384_d128_topk${topk}_int8_fp16`);
    expect(names).toContain('sparge_b2_h16_s16384_d128_topk0.4_causal_fp16');
    expect(names).toHaveLength(24);
    const lengths = SPARGE_BENCH_CASES.map((c) => c.spec.s);
    expect(lengths).toEqual([...lengths].sort((a, b) => a - b));
  });

  it('ask the reference server for the sparge op: attention_fwd params (self-attention, bhsd) plus 128-row blocks', () => {
    for (const c of SPARGE_BENCH_CASES) {
      const { s, causal } = c.spec;
      expect(c.reference).toEqual({
        op: 'sparge',
        params: { dtype: 'fp16', b: 2, h: 16, hk: 16, sq: s, sk: s, d: 128, dv: 128, causal, layout: 'bhsd', block_q: 128, block_k: 128 },
      });
      expect(c.precision).toEqual({ o: 'fp16' });
      expect(c.errorBaselines).toEqual(['torch-flash', 'torch-cudnn', 'torch-efficient']);
      expect(c.seed).toBe(SPARGE_INPUT_SEED);
      expect(c.params['int8']).toBe(c.spec.int8);
      expect(c.params['inputs']).toMatch(
        new RegExp(`seed ${SPARGE_INPUT_SEED} .* slice of ${s}x128; head bh = slice rotated by bh\\*floor\\(s/\\(b\\*h\\)\\) rows`),
      );
    }
  });

  it('credit the dense-equivalent FLOPs: 4·b·h·s²·d, halved for causal', () => {
    const dense = SPARGE_BENCH_CASES.find((c) => c.name === 'sparge_b2_h16_s32768_d128_topk0.1_fp16')!;
    expect(dense.flops).toBe(4 * 2 * 16 * 32768 * 32768 * 128);
    const causal = SPARGE_BENCH_CASES.find((c) => c.spec.causal)!;
    expect(causal.flops).toBe((4 * 2 * 16 * 16384 * 16384 * 128) / 2);
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1, max: 32 }),
        fc.integer({ min: 1, max: 4096 }),
        fc.boolean(),
        (b, h, s, causal) => {
          const spec: SpargeBenchSpec = { b, h, s, d: 64, topk: 0.5, causal, int8: false, pvMode: 'none', pvThreshold: 50 };
          expect(spargeBenchCase(spec).flops).toBe(attentionForwardFlops({ b, h, sq: s, sk: s, dQk: 64, causal }));
        },
      ),
    );
  });

  it("map to the runner's problem: fp16 self-attention with the case's topk, causality, int8, PV mode and threshold", () => {
    const int8 = SPARGE_BENCH_CASES.find((c) => c.spec.int8)!.spec;
    expect(spargeProblemOf(int8)).toEqual({
      dtype: 'fp16',
      batch: 2,
      nheadQ: 16,
      hdimQ: 128,
      seqlenQ: 16384,
      seqlenK: 16384,
      params: { topk: int8.topk, isCausal: false, int8: true, pvThreshold: 50 },
      pvMode: 'none',
    });
  });
});

describe('sparge writeInputs', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sparge-inputs-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const spec: SpargeBenchSpec = { b: 1, h: 3, s: 256, d: 64, topk: 0.5, causal: false, int8: false, pvMode: 'none', pvThreshold: 50 };
  const c = spargeBenchCase(spec);
  const lines: string[] = [];
  const suite = spargeSuite([c], (line) => lines.push(line));

  it('writes q, k, v as fp16 (b, h, s, d) files, head bh the slice rotated by bh·⌊s/(b·h)⌋ rows, without a GPU', () => {
    const source = suite.writeInputs!(c, dir);
    expect(source).toMatchObject({ source: 'files', seed: SPARGE_INPUT_SEED, generator: c.params['inputs'] });
    const slice = spargeSyntheticInputs(
      { batch: 1, nhead: 1, seqlenQ: 256, seqlenK: 256, headDim: 64 },
      { seed: SPARGE_INPUT_SEED, roundTo: 'fp16' },
    );
    for (const name of ['q', 'k', 'v'] as const) {
      const file = source.tensors[name]!;
      expect(file).toEqual({ file: `${name}.bin`, dtype: 'fp16', shape: [1, 3, 256, 64] });
      expect(statSync(join(dir, file.file)).size).toBe(3 * 256 * 64 * 2);
      const bytes = readFileSync(join(dir, file.file));
      const bits = new Uint16Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 2);
      const sliceBits = encodeArray('fp16', slice[name]) as Uint16Array;
      for (let bh = 0; bh < 3; bh++) {
        const head = bits.subarray(bh * 256 * 64, (bh + 1) * 256 * 64);
        expect(head).toEqual(rotateRows(sliceBits, spargeHeadRotation(bh, 256, 3), 64));
      }
    }
    expect(lines.filter((l) => l.includes('one slice drawn'))).toHaveLength(1);
  });

  it('draws the slice once per sequence length', () => {
    suite.writeInputs!(c, dir);
    expect(lines.filter((l) => l.includes('one slice drawn'))).toHaveLength(1);
  });
});

describe('sparge input rotation', () => {
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
  });
});
