import { ArgumentError } from '@tilekit/numeric';
import { describe, expect, it } from 'vitest';
import { float32, int32, uint32 } from '../cType.ts';
import { sm80, sm90a } from '../cudaTarget.ts';
import { TargetFeatureError } from '../errors.ts';
import { variable } from '../ops.ts';
import { SourceBuilder } from '../sourceBuilder.ts';
import { dequantFp8x2ToBf16x2 } from './dequantFp8x2.ts';

function emitted(format: 'fp8e4m3fn' | 'fp8e5m2'): string {
  const src = new SourceBuilder({ dialect: sm90a, header: 'dequantFp8x2ToBf16x2 probe' });
  src.function({ name: 'probe', qualifiers: sm90a.kernelQualifiers(), params: { w: uint32, s: float32 } }, (b, p) => {
    b.let('a', uint32, dequantFp8x2ToBf16x2(sm90a, format, p.w, p.s));
    b.let('c', uint32, dequantFp8x2ToBf16x2(sm90a, format, p.w, p.s));
  });
  return src.render();
}

describe('dequantFp8x2ToBf16x2', () => {
  it('emits the exact fp8x2 → f16x2 cvt, the fp32 widening and scale, and a bf16x2 pack with element 0 low, once per file', () => {
    const text = emitted('fp8e4m3fn');
    expect(text).toContain('cvt.rn.f16x2.e4m3x2 hh, p;');
    expect(text).toContain('mov.b32 {h0, h1}, hh;');
    expect(text).toContain('cvt.rn.bf16x2.f32 %0, f1, f0;');
    expect(text.match(/unsigned int tk_dequant_e4m3x2_bf16x2\(/g)).toHaveLength(1);
    expect(emitted('fp8e5m2')).toContain('cvt.rn.f16x2.e5m2x2 hh, p;');
  });

  it('rejects sm_80, another format, a signed or narrow pair, and a non-fp32 scale', () => {
    const w = variable('w', uint32);
    const s = variable('s', float32);
    expect(() => dequantFp8x2ToBf16x2(sm80, 'fp8e4m3fn', w, s)).toThrow(TargetFeatureError);
    expect(() => dequantFp8x2ToBf16x2(sm90a, 'int8' as never, w, s)).toThrow(ArgumentError);
    expect(() => dequantFp8x2ToBf16x2(sm90a, 'fp8e4m3fn', variable('i', int32), s)).toThrow(/pair/);
    expect(() => dequantFp8x2ToBf16x2(sm90a, 'fp8e4m3fn', w, variable('i', int32))).toThrow(/scale/);
  });
});
