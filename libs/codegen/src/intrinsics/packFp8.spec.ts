import { ArgumentError } from '@tilekit/numeric';
import { describe, expect, it } from 'vitest';
import { float32, int32 } from '../cType.ts';
import { sm80, sm90a } from '../cudaTarget.ts';
import { TargetFeatureError } from '../errors.ts';
import { variable } from '../ops.ts';
import { SourceBuilder } from '../sourceBuilder.ts';
import { packFp8x2 } from './packFp8.ts';

function emitted(format: 'fp8e4m3fn' | 'fp8e5m2'): string {
  const src = new SourceBuilder({ dialect: sm90a, header: 'packFp8x2 probe' });
  src.function({ name: 'probe', qualifiers: sm90a.kernelQualifiers(), params: { lo: float32, hi: float32 } }, (b, p) => {
    b.let('packed', int32, packFp8x2(sm90a, format, p.lo, p.hi));
  });
  return src.render();
}

describe('packFp8x2', () => {
  it('emits cvt.rn.satfinite.<fmt>x2.f32 with hi as the first source (bits 8-15) and lo second (bits 0-7), once per file', () => {
    const text = emitted('fp8e4m3fn');
    expect(text).toContain('cvt.rn.satfinite.e4m3x2.f32 t, %2, %1;');
    expect(text).toContain('cvt.u32.u16 %0, t;');
    expect(text).toContain('tk_pack_e4m3x2(lo, hi)');
    expect(text.match(/unsigned int tk_pack_e4m3x2\(/g)).toHaveLength(1);
    expect(emitted('fp8e5m2')).toContain('cvt.rn.satfinite.e5m2x2.f32 t, %2, %1;');
  });

  it('rejects sm_80 (no fp8 cvt), another format, and non-fp32 operands', () => {
    const x = variable('x', float32);
    expect(() => packFp8x2(sm80, 'fp8e4m3fn', x, x)).toThrow(TargetFeatureError);
    expect(() => packFp8x2(sm90a, 'int8' as never, x, x)).toThrow(ArgumentError);
    expect(() => packFp8x2(sm90a, 'fp8e4m3fn', variable('i', int32), x)).toThrow(/lo/);
    expect(() => packFp8x2(sm90a, 'fp8e5m2', x, variable('i', int32))).toThrow(/hi/);
  });
});
