import { int32, pointer, sm90a, SourceBuilder, uint32 } from '@tilekit/codegen';
import { makeNaiveTensorDescriptor, symbol } from '@tilekit/layout';
import { roundTo } from '@tilekit/numeric';
import { makeTensorView } from '@tilekit/tile';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { referenceGemm } from '../reference/referenceGemm.ts';
import {
  applyGemmActivation,
  applyGemmEpilogue,
  checkGemmEpilogue,
  GEMM_ACTIVATIONS,
  GEMM_EPILOGUE_NONE,
  GemmEpilogueError,
  type GemmEpilogue,
} from './gemmEpilogue.ts';
import { WsTmaWgmmaPipeline } from './wsTmaWgmmaPipeline.ts';

const f32 = fc.float({ min: -20, max: 20, noNaN: true, noDefaultInfinity: true }).map(Math.fround);

describe('gemm epilogue functor (TS model)', () => {
  it('golden values: relu, gelu_tanh (PyTorch approximate="tanh"), silu', () => {
    expect(applyGemmActivation('relu', -1.5)).toBe(0);
    expect(applyGemmActivation('relu', 2.25)).toBe(2.25);
    expect(applyGemmActivation('gelu_tanh', 0)).toBe(0);
    expect(applyGemmActivation('gelu_tanh', 1)).toBeCloseTo(0.841192, 6);
    expect(applyGemmActivation('gelu_tanh', -1)).toBeCloseTo(-0.158808, 6);
    expect(applyGemmActivation('gelu_tanh', 10)).toBe(10);
    expect(applyGemmActivation('silu', 0)).toBe(0);
    expect(applyGemmActivation('silu', 1)).toBeCloseTo(0.7310586, 7);
    expect(applyGemmActivation('silu', -100)).toBeCloseTo(0, 30);
    expect(applyGemmActivation('none', 0.1)).toBe(Math.fround(0.1));
  });

  it('every result is an fp32 value close to the exact (double) activation', () => {
    const exact: Record<(typeof GEMM_ACTIVATIONS)[number], (v: number) => number> = {
      none: (v) => v,
      relu: (v) => Math.max(v, 0),
      gelu_tanh: (v) => 0.5 * v * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (v + 0.044715 * v ** 3))),
      silu: (v) => v / (1 + Math.exp(-v)),
    };
    fc.assert(
      fc.property(fc.constantFrom(...GEMM_ACTIVATIONS), f32, (act, v) => {
        const got = applyGemmActivation(act, v);
        expect(Math.fround(got)).toBe(got);
        expect(Math.abs(got - exact[act](v))).toBeLessThanOrEqual(1e-5 * Math.max(1, Math.abs(v)));
      }),
    );
  });

  it('alpha·acc + bias is one rounding (fused), relu never negative', () => {
    fc.assert(
      fc.property(f32, f32, f32, (acc, alpha, bias) => {
        expect(applyGemmEpilogue('none', acc, alpha, bias)).toBe(Math.fround(alpha * acc + bias));
        expect(applyGemmEpilogue('none', acc, alpha)).toBe(Math.fround(alpha * acc));
        expect(applyGemmEpilogue('relu', acc, alpha, bias)).toBeGreaterThanOrEqual(0);
      }),
    );
  });

  it('checkGemmEpilogue rejects unknown activations and non-boolean bias', () => {
    expect(checkGemmEpilogue({ bias: true, activation: 'silu' })).toEqual({ bias: true, activation: 'silu' });
    expect(() => checkGemmEpilogue({ bias: false, activation: 'tanh' as never })).toThrow(GemmEpilogueError);
    expect(() => checkGemmEpilogue({ bias: 1 as never, activation: 'none' })).toThrow(/bias/);
  });
});

describe('referenceGemm with the epilogue', () => {
  it('equals the plain fp32 reference followed by the functor per element, then the output rounding', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 7 }),
        fc.integer({ min: 1, max: 9 }),
        fc.constantFrom(...GEMM_ACTIVATIONS),
        fc.boolean(),
        fc.constantFrom(1, 0.5, -2),
        fc.integer({ min: 1, max: 1 << 30 }),
        (m, n, k, activation, withBias, alpha, seed) => {
          let x = seed;
          const rnd = (): number => ((x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 2 - 1;
          const a = Array.from({ length: m * k }, () => roundTo('fp16', rnd()));
          const b = Array.from({ length: k * n }, () => roundTo('fp16', rnd()));
          const bias = Array.from({ length: n }, () => roundTo('fp16', rnd()));
          const base = {
            m,
            n,
            k,
            a: { data: a, layout: 'row' as const },
            b: { data: b, layout: 'col' as const },
            inputType: 'fp16' as const,
          };
          const plain = referenceGemm(base);
          const got = referenceGemm({ ...base, outType: 'fp16', epilogue: { alpha, activation, ...(withBias ? { bias } : {}) } });
          for (let i = 0; i < m; i++) {
            for (let j = 0; j < n; j++) {
              expect(got[i * n + j]).toBe(
                roundTo('fp16', applyGemmEpilogue(activation, plain[i * n + j]!, alpha, withBias ? bias[j] : undefined)),
              );
            }
          }
        },
      ),
    );
  });

  it('golden: relu(A·B + bias) on a 2×2 product', () => {
    const c = referenceGemm({
      m: 2,
      n: 2,
      k: 2,
      a: { data: [1, 2, 3, 4], layout: 'row' },
      b: { data: [1, 0, 0, 1], layout: 'row' },
      epilogue: { bias: [-2, 0.5], activation: 'relu' },
    });
    expect([...c]).toEqual([0, 2.5, 1, 4.5]);
  });

  it('names bad epilogue arguments', () => {
    const base = { m: 1, n: 2, k: 1, a: { data: [1], layout: 'row' as const }, b: { data: [1, 1], layout: 'row' as const } };
    expect(() => referenceGemm({ ...base, epilogue: { bias: [1] } })).toThrow(/epilogue\.bias/);
    expect(() => referenceGemm({ ...base, epilogue: { activation: 'tanh' as never } })).toThrow(/epilogue\.activation/);
    expect(() => referenceGemm({ ...base, accType: 'fp64', epilogue: { activation: 'relu' } })).toThrow(/accType fp32/);
  });
});

describe('emitted epilogue (through WsTmaWgmmaPipeline)', () => {
  const emit = (epilogue?: GemmEpilogue): string => {
    const pipe = new WsTmaWgmmaPipeline({
      dtype: 'fp16',
      tileM: 128,
      tileN: 128,
      tileK: 64,
      stages: 4,
      producerRegisters: 40,
      consumerRegisters: 232,
      groupM: 8,
    });
    const src = new SourceBuilder({ dialect: sm90a });
    const desc = makeNaiveTensorDescriptor(
      [symbol('m', { max: 1 << 20 }), symbol('n', { max: 1 << 20, multipleOf: 2 })],
      [symbol('ldc', { max: 1 << 20, multipleOf: 2 }), 1],
      { vectorLength: 2 },
    );
    const half = sm90a.dtypeType('fp16');
    src.function(
      {
        name: 'gemm_body',
        qualifiers: sm90a.kernelQualifiers(),
        params: {
          c: pointer(half),
          bias: pointer(half, { const: true }),
          alpha: sm90a.dtypeType('fp32'),
          m: int32,
          n: int32,
          k: int32,
          ldc: int32,
          a_map: pointer(uint32),
          b_map: pointer(uint32),
        },
      },
      (b, p) => {
        pipe.emit(b, sm90a, {
          aMap: p.a_map,
          bMap: p.b_map,
          m: p.m,
          n: p.n,
          k: p.k,
          c: makeTensorView(p.c, desc, { elementBytes: 2 }),
          symbols: { m: p.m, n: p.n, ldc: p.ldc },
          ...(epilogue === undefined ? {} : { epilogue: { functor: epilogue, alpha: p.alpha, bias: p.bias } }),
        });
      },
    );
    return src.render();
  };

  it('the identity epilogue emits exactly the kernel without one', () => {
    expect(emit(GEMM_EPILOGUE_NONE)).toBe(emit());
  });

  it('bias + gelu_tanh: one predicated bias load per column of the thread (32), one fmaf and tanhf per element (64), before the stores', () => {
    const text = emit({ bias: true, activation: 'gelu_tanh' });
    expect(text.match(/bias_n\w* < n \? static_cast<float>\(bias\[bias_n\w*\]\) : 0\.0f/g)?.length).toBe(32);
    expect(text.match(/fmaf\(alpha, acc\[\d+\], bias_v\w*\)/g)?.length).toBe(64);
    expect(text.match(/tanhf\(/g)?.length).toBe(64);
    expect(text.indexOf('tanhf(')).toBeLessThan(text.search(/if \(inside\w*\) \{/));
  });

  it('silu without bias: alpha·acc then expf; relu a select', () => {
    const silu = emit({ bias: false, activation: 'silu' });
    expect(silu).not.toContain('bias[');
    expect(silu.match(/alpha \* acc\[\d+\]/g)?.length).toBe(64);
    expect(silu.match(/expf\(-ep\w*\)/g)?.length).toBe(64);
    expect(emit({ bias: true, activation: 'relu' }).match(/ep\w* > 0\.0f \? ep\w* : 0\.0f/g)?.length).toBe(64);
  });
});
