import { describe, expect, it } from 'vitest';
import { ArgumentError } from '@tilekit/numeric';
import {
  array,
  bool,
  commonType,
  float32,
  float64,
  int8,
  int16,
  int32,
  int64,
  opaque,
  pointer,
  promote,
  sameType,
  typeToString,
  uint8,
  uint32,
  uint64,
} from './cType.ts';
import { include } from './requirement.ts';

describe('C++ types', () => {
  it('spell fundamental types (no <cstdint> needed)', () => {
    expect([int32, uint32, int64, uint64, int8, uint8, int16].map(typeToString)).toEqual([
      'int',
      'unsigned int',
      'long long',
      'unsigned long long',
      'signed char',
      'unsigned char',
      'short',
    ]);
    expect(typeToString(pointer(float32, { const: true, restrict: true }))).toBe('const float* __restrict__');
    expect(typeToString(pointer(pointer(int32)))).toBe('int**');
    expect(typeToString(array(float32, 4))).toBe('float[4]');
    expect(typeToString(opaque('__half', [include('<cuda_fp16.h>')]))).toBe('__half');
  });

  it('promote and convert like C++', () => {
    expect(promote(bool)).toBe(int32);
    expect(promote(uint8)).toBe(int32);
    expect(promote(uint32)).toBe(uint32);
    expect(commonType(int32, uint32)).toBe(uint32);
    expect(commonType(int64, uint32)).toBe(int64);
    expect(commonType(int64, uint64)).toBe(uint64);
    expect(commonType(int8, int16)).toBe(int32);
    expect(commonType(uint64, float32)).toBe(float32);
    expect(commonType(float32, float64)).toBe(float64);
    expect(commonType(bool, bool)).toBe(int32);
  });

  it('compare structurally', () => {
    expect(sameType(pointer(int32), pointer(int32))).toBe(true);
    expect(sameType(pointer(int32), pointer(int32, { const: true }))).toBe(false);
    expect(sameType(opaque('dim3'), opaque('dim3'))).toBe(true);
    expect(sameType(array(int32, 2), array(int32, 3))).toBe(false);
  });

  it('reject malformed types', () => {
    expect(() => opaque('not a type')).toThrow(ArgumentError);
    expect(() => array(int32, 0)).toThrow(ArgumentError);
    expect(() => include('cuda_fp16.h')).toThrow(ArgumentError);
  });
});
