import { describe, expect, it } from 'vitest';
import { SpargeArgumentError } from './spargeArgumentError.ts';
import { spargeErrorSparsityCurve, spargeRelativeL1, spargeSyntheticInputs } from './spargeSyntheticInputs.ts';
import { spargeRandomValues } from './testing/spargeRandomValues.ts';

const shape = { batch: 1, nhead: 2, seqlenQ: 1024, seqlenK: 1024, headDim: 64 };

describe('spargeSyntheticInputs', () => {
  it('is reproducible from its seed, fp16-representable, and differs across seeds', () => {
    const small = { batch: 1, nhead: 1, seqlenQ: 64, seqlenK: 64, headDim: 64 };
    const a = spargeSyntheticInputs(small, { seed: 3 });
    expect(spargeSyntheticInputs(small, { seed: 3 })).toEqual(a);
    expect(spargeSyntheticInputs(small, { seed: 4 }).q).not.toEqual(a.q);
    for (const x of a.q) expect(Math.abs(x * 2 ** 24) % 1).toBe(0); // fp16 values are multiples of 2^−24
  });

  it('topk = 0.5 keeps the relative L1 error vs dense ≤ 0.05 at b1 h2 s1024 d64; the curve falls to 0 at topk 1', () => {
    const inputs = spargeSyntheticInputs(shape, { seed: 1 });
    const curve = spargeErrorSparsityCurve(inputs, [0.2, 0.5, 1]);
    const at = (v: number) => curve.find((p) => p.value === v)!;
    expect(at(0.5).relativeL1).toBeLessThanOrEqual(0.05);
    expect(at(0.5).achievedSparsity).toBeGreaterThan(0.4);
    expect(at(1).relativeL1).toBe(0);
    expect(at(1).achievedSparsity).toBe(0);
    expect(at(0.2).achievedSparsity).toBeGreaterThan(at(0.5).achievedSparsity);
    expect(at(0.2).relativeL1).toBeGreaterThan(at(0.5).relativeL1);
  });

  it('locality matters: unstructured uniform inputs at topk = 0.5 are far above the 0.05 error', () => {
    const n = shape.nhead * shape.seqlenQ * shape.headDim;
    const uniform = { shape, q: spargeRandomValues(n, 1), k: spargeRandomValues(n, 2), v: spargeRandomValues(n, 3) };
    expect(spargeErrorSparsityCurve(uniform, [0.5])[0]!.relativeL1).toBeGreaterThan(0.2);
  });

  it('rejects cross-attention shapes and bad options', () => {
    expect(() => spargeSyntheticInputs({ ...shape, seqlenK: 512 })).toThrow(SpargeArgumentError);
    expect(() => spargeSyntheticInputs(shape, { sharpness: -1 })).toThrow(/options.sharpness/);
  });
});

describe('spargeRelativeL1', () => {
  it('is upstream Σ|o − ref| / Σ|ref|', () => {
    expect(spargeRelativeL1([1, 2, 3], [1, 2, 4])).toBeCloseTo(1 / 7, 15);
    expect(spargeRelativeL1([0, 0], [0, 0])).toBe(0);
    expect(() => spargeRelativeL1([1], [1, 2])).toThrow(SpargeArgumentError);
  });
});
