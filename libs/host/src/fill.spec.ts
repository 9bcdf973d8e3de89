import fc from 'fast-check';
import { ArgumentError, type DTypeName, getDType, roundTo } from '@tilekit/numeric';
import { describe, expect, it } from 'vitest';
import { ArgParseError } from './argParser.ts';
import { type FillSpec, fillTensor, fillValues, formatFillSpec, parseFillSpec } from './fill.ts';
import { HostTensor } from './hostTensor.ts';
import { applyViewChain, hostTensorArb, viewChainArb } from './testing/index.ts';

const floatDTypes: DTypeName[] = ['fp32', 'fp16', 'bf16', 'fp8e4m3fn', 'fp8e5m2', 'fp8e4m3fnuz', 'fp8e5m2fnuz'];
const allDTypes: DTypeName[] = [...floatDTypes, 'int8', 'uint8', 'int32', 'int64'];

function moments(values: ArrayLike<number>): { mean: number; variance: number } {
  let sum = 0;
  for (let i = 0; i < values.length; i++) sum += values[i]!;
  const mean = sum / values.length;
  let squares = 0;
  for (let i = 0; i < values.length; i++) squares += (values[i]! - mean) ** 2;
  return { mean, variance: squares / (values.length - 1) };
}

describe('parseFillSpec / formatFillSpec', () => {
  it('golden: CK kinds, defaults, parameters and aliases', () => {
    const cases: [string, FillSpec][] = [
      ['uf', { kind: 'uf', min: 0, max: 1 }],
      ['uf:-2,2', { kind: 'uf', min: -2, max: 2 }],
      ['uf:q', { kind: 'ufq' }],
      ['ui', { kind: 'ui', min: -3, max: 3 }],
      ['ui:-5,5', { kind: 'ui', min: -5, max: 5 }],
      ['nf', { kind: 'nf', mean: 0, stddev: 3 }],
      ['nf:1,0.5', { kind: 'nf', mean: 1, stddev: 0.5 }],
      ['ni', { kind: 'ni', mean: 0, stddev: 3 }],
      ['tf', { kind: 'tf' }],
      ['constant:0.5', { kind: 'constant', value: 0.5 }],
      ['0', { kind: 'ui', min: -3, max: 3 }],
      ['1', { kind: 'uf', min: 0, max: 1 }],
      ['2', { kind: 'tf' }],
      ['3', { kind: 'ufq' }],
      [' UF:1e-3,2 ', { kind: 'uf', min: 0.001, max: 2 }],
    ];
    for (const [text, spec] of cases) expect(parseFillSpec(text)).toEqual(spec);
    expect(formatFillSpec({ kind: 'uf', min: -2, max: 2 })).toBe('uf:-2,2');
    expect(formatFillSpec({ kind: 'ufq' })).toBe('uf:q');
  });

  const finite = fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 });
  const specArb: fc.Arbitrary<FillSpec> = fc.oneof(
    fc
      .tuple(finite, finite)
      .filter(([a, b]) => a < b)
      .map(([min, max]) => ({ kind: 'uf' as const, min, max })),
    fc.tuple(fc.integer({ min: -100, max: 100 }), fc.nat({ max: 50 })).map(([min, w]) => ({ kind: 'ui' as const, min, max: min + w })),
    fc.tuple(finite, fc.double({ min: 0, max: 10, noNaN: true })).map(([mean, stddev]) => ({ kind: 'nf' as const, mean, stddev })),
    fc.tuple(finite, fc.double({ min: 0, max: 10, noNaN: true })).map(([mean, stddev]) => ({ kind: 'ni' as const, mean, stddev })),
    fc.constantFrom({ kind: 'ufq' as const }, { kind: 'tf' as const }),
    finite.map((value) => ({ kind: 'constant' as const, value })),
  );
  it('parseFillSpec ∘ formatFillSpec = identity', () => {
    fc.assert(
      fc.property(specArb, (spec) => {
        expect(parseFillSpec(formatFillSpec(spec))).toEqual(spec);
      }),
    );
  });

  it('errors: ArgumentError, or ArgParseError naming the flag', () => {
    expect(() => parseFillSpec('xx')).toThrow(
      'fill spec: expected uf[:min,max], ui[:min,max], nf[:mean,stddev], ni[:mean,stddev], uf:q, tf or constant:value (got "xx")',
    );
    expect(() => parseFillSpec('uf:2,1')).toThrow('fill spec: uf takes min,max with min < max (got "uf:2,1")');
    expect(() => parseFillSpec('uf:1')).toThrow('fill spec: uf takes min,max as finite numbers (got "uf:1")');
    expect(() => parseFillSpec('ui:0.2,0.8')).toThrow('ui takes min,max with at least one integer in [min, max]');
    expect(() => parseFillSpec('nf:0,-1')).toThrow('nf takes mean,stddev with stddev >= 0');
    expect(() => parseFillSpec('constant')).toThrow('constant takes a value (constant:0.5)');
    expect(() => parseFillSpec('tf:1')).toThrow(ArgumentError);
    let error: unknown;
    try {
      parseFillSpec('uf:a,b', '-init');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ArgParseError);
    expect((error as Error).message).toBe('-init=uf:a,b: uf takes min,max as finite numbers');
  });
});

describe('fillTensor', () => {
  it('is reproducible: same seed ⇒ same values; another seed ⇒ other values', () => {
    for (const spec of ['uf', 'ui', 'nf', 'ni', 'uf:q']) {
      const a = fillTensor(HostTensor.empty('bf16', [8, 16]), spec, 11939).toFloat64Array();
      const b = fillTensor(HostTensor.empty('bf16', [8, 16]), spec, 11939).toFloat64Array();
      const c = fillTensor(HostTensor.empty('bf16', [8, 16]), spec, 11940).toFloat64Array();
      expect(a).toEqual(b);
      expect(a).not.toEqual(c);
    }
  });

  it('golden: the first values of seed 11939 (computed independently from a C build of the reference algorithms)', () => {
    expect([...fillValues('ui', 8, 11939)]).toEqual([1, 3, -3, -1, -2, 0, 1, -2]);
    expect([...fillTensor(HostTensor.empty('fp16', [4]), 'uf', 11939).toFloat64Array()]).toEqual([
      0.09814453125, 0.71484375, 0.623046875, 0.54931640625,
    ]);
  });

  it('uniform fills stay in range after rounding, for every dtype', () => {
    for (const name of allDTypes) {
      const dtype = getDType(name);
      const lo = dtype.signed ? -2 : 0;
      const uniform = fillTensor(HostTensor.empty(name, [4096]), `uf:${lo},2`, 1).toFloat64Array();
      expect([...uniform.filter((v) => !(v >= lo && v <= 2))], name).toEqual([]);
      if (dtype.kind === 'float') {
        const quant = fillTensor(HostTensor.empty(name, [4096]), 'uf:q', 2).toFloat64Array();
        expect([...quant.filter((v) => !(Math.abs(v) <= dtype.max))], name).toEqual([]);
      }
    }
  });

  it('integer-valued fills store integers the dtype represents exactly', () => {
    for (const name of allDTypes) {
      const dtype = getDType(name);
      for (const spec of ['ui', 'ni', 'ui:-20,20']) {
        const values = fillTensor(HostTensor.empty(name, [4096]), spec, 3).toFloat64Array();
        const bad = values.filter((v) => !Number.isInteger(v) || roundTo(name, v) !== v || v < dtype.lowest || v > dtype.max);
        expect([...bad], `${name} ${spec}`).toEqual([]);
        if (spec === 'ui' && dtype.signed) expect(new Set(values)).toEqual(new Set([-3, -2, -1, 0, 1, 2, 3]));
      }
    }
  });

  it('mean and variance are about right (deterministic: seeded)', () => {
    const n = 40_000;
    const check = (spec: string, mean: number, variance: number, tolMean: number, tolVar: number) => {
      const m = moments(fillValues(spec, n, 123));
      expect(Math.abs(m.mean - mean), spec).toBeLessThan(tolMean);
      expect(Math.abs(m.variance - variance) / variance, spec).toBeLessThan(tolVar);
    };
    check('uf', 0.5, 1 / 12, 0.01, 0.03);
    check('uf:-2,6', 2, 64 / 12, 0.05, 0.03);
    check('ui', 0, 4, 0.05, 0.03); // discrete uniform on 7 points: (7² − 1) / 12
    check('nf', 0, 9, 0.1, 0.03);
    check('nf:5,0.5', 5, 0.25, 0.01, 0.03);
    check('ni', 0, 9 + 1 / 12, 0.1, 0.03); // rounding adds ≈ 1/12
  });

  it('tf is cos(i) in row-major order; constant fills one value', () => {
    const t = fillTensor(HostTensor.empty('fp32', [2, 3]), 'tf', 0);
    expect([...t.toFloat64Array()]).toEqual([0, 1, 2, 3, 4, 5].map((i) => Math.fround(Math.cos(i))));
    expect([...fillTensor(HostTensor.empty('fp16', [3]), 'constant:0.1', 0).toFloat64Array()]).toEqual(Array(3).fill(roundTo('fp16', 0.1)));
  });

  it('a view is filled exactly like a contiguous tensor of its shape', () => {
    fc.assert(
      fc.property(
        hostTensorArb('fp16', { minLength: 0 }),
        viewChainArb(),
        fc.integer(),
        fc.constantFrom('uf', 'ni', 'tf'),
        (base, steps, seed, spec) => {
          const { view } = applyViewChain(base, steps);
          fillTensor(view, spec, seed);
          expect(view.toFloat64Array()).toEqual(fillTensor(HostTensor.empty('fp16', view.shape), spec, seed).toFloat64Array());
        },
      ),
    );
  });

  it('rejects bad counts and uf:q without a dtype', () => {
    expect(() => fillValues('uf', -1, 0)).toThrow('fillValues: count must be a non-negative integer (got -1)');
    expect(() => fillValues('uf:q', 4, 0)).toThrow('fillValues: uf:q needs the dtype');
    expect(() => fillTensor(HostTensor.empty('fp32', [2]), 'uf', 0.5)).toThrow('seed: must be a safe integer or a bigint (got 0.5)');
  });
});
