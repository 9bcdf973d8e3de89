import { describe, expect, it } from 'vitest';
import { ArgumentError } from '@tilekit/numeric';
import { CodegenTypeError, DuplicateNameError } from './errors.ts';
import { float32, int32, int64, pointer, uint32 } from './cType.ts';
import { callFunction, declareFunction, defineFunction, renderFunction } from './function.ts';
import { add, div, mul } from './ops.ts';
import { printExpr } from './printExpr.ts';

describe('functions', () => {
  it('define, render and call', () => {
    const f = defineFunction(
      {
        name: 'offset',
        returns: int32,
        params: { row: int32, col: { type: int32, range: [0, 63] } },
        qualifiers: ['__device__', '__forceinline__'],
        templateParams: ['int Stride'],
      },
      (b, { row, col }) => {
        const q = b.let('q', int32, div(col, 8));
        b.return(add(mul(row, 64), q));
      },
    );
    expect(renderFunction(f)).toBe(
      [
        'template <int Stride>',
        '__device__ __forceinline__ int offset(int row, int col) {',
        '  const int q = col >> 3;',
        '  return row * 64 + q;',
        '}',
        '',
      ].join('\n'),
    );
    expect(printExpr(callFunction(f, [1, 2]))).toBe('offset(1, 2)');
    expect(printExpr(callFunction(f, [{ kind: 'var', name: 'z', type: int64, range: null }, 0]))).toBe('offset(static_cast<int>(z), 0)');
    expect(() => callFunction(f, [1])).toThrow(CodegenTypeError);
  });

  it('declares prototypes with attributes', () => {
    const k = declareFunction({
      name: 'k',
      qualifiers: ['extern "C"', '__global__'],
      attributes: ['__launch_bounds__(128)'],
      params: { a: pointer(float32, { const: true, restrict: true }), n: uint32 },
    });
    expect(renderFunction(k)).toBe('extern "C" __global__ void __launch_bounds__(128) k(const float* __restrict__ a, unsigned int n);\n');
  });

  it('keeps parameter names exact and locals clear of them', () => {
    const f = defineFunction({ name: 'g', returns: int32, params: { i: int32 } }, (b, { i }) => {
      const j = b.let('i', int32, add(i, 1));
      b.return(j);
    });
    expect(renderFunction(f)).toContain('const int i_1 = i + 1;');
    expect(() => defineFunction({ name: 'h', params: { for: int32 } }, () => {})).toThrow(ArgumentError);
    expect(() => defineFunction({ name: 'bad name' }, () => {})).toThrow(ArgumentError);
    expect(DuplicateNameError).toBeDefined();
  });
});
