import { fc, test } from '@fast-check/vitest';
import { host, renderFunction } from '@tilekit/codegen';
import { runHostFunctions, toolAvailable } from '@tilekit/codegen/testing';
import { describe, expect, it } from 'vitest';
import { WgmmaDescriptorError } from '../errors.ts';
import {
  decodeWgmmaDescriptor,
  defineWgmmaDescriptorEncoder,
  encodeWgmmaDescriptor,
  wgmmaSwizzleCode,
  wgmmaSwizzleModes,
  type WgmmaDescriptorFields,
} from './wgmmaDescriptor.ts';

const byteField = fc.integer({ min: 0, max: (1 << 14) - 1 }).map((x) => x * 16);
const fieldsArb: fc.Arbitrary<WgmmaDescriptorFields> = fc.record({
  startAddress: byteField,
  leadingByteOffset: byteField,
  strideByteOffset: byteField,
  baseOffset: fc.integer({ min: 0, max: 7 }),
  swizzle: fc.constantFrom(...wgmmaSwizzleModes),
});

describe('wgmma matrix descriptor (PTX ISA 9.7.15.5.1.2.2 "Matrix Descriptor Format")', () => {
  it('bit positions: 0–13 start >> 4, 16–29 LBO >> 4, 32–45 SBO >> 4, 49–51 base offset, 62–63 swizzle (none 0, 128B 1, 64B 2, 32B 3)', () => {
    expect(wgmmaSwizzleModes.map(wgmmaSwizzleCode)).toEqual([0, 1, 2, 3]);
    // A K-major 128B-swizzled tile at shared address 0x400: LBO unused (1), SBO = 8 rows × 128 B.
    expect(encodeWgmmaDescriptor({ startAddress: 0x400, leadingByteOffset: 16, strideByteOffset: 1024, swizzle: '128B' })).toBe(
      0x4000_0040_0001_0040n,
    );
    expect(encodeWgmmaDescriptor({ startAddress: 0x3fff0, leadingByteOffset: 0, strideByteOffset: 0, swizzle: 'none' })).toBe(0x3fffn);
    expect(encodeWgmmaDescriptor({ startAddress: 0, leadingByteOffset: 0x3fff0, strideByteOffset: 0, swizzle: 'none' })).toBe(
      0x3fffn << 16n,
    );
    expect(encodeWgmmaDescriptor({ startAddress: 0, leadingByteOffset: 0, strideByteOffset: 0x3fff0, swizzle: 'none' })).toBe(
      0x3fffn << 32n,
    );
    expect(encodeWgmmaDescriptor({ startAddress: 0, leadingByteOffset: 0, strideByteOffset: 0, baseOffset: 7, swizzle: 'none' })).toBe(
      7n << 49n,
    );
    expect(encodeWgmmaDescriptor({ startAddress: 0, leadingByteOffset: 0, strideByteOffset: 0, swizzle: '32B' })).toBe(3n << 62n);
    expect(encodeWgmmaDescriptor({ startAddress: 0, leadingByteOffset: 0, strideByteOffset: 0, swizzle: '64B' })).toBe(2n << 62n);
  });

  test.prop([fieldsArb])('decode ∘ encode = id; reserved bits stay zero', (f) => {
    const d = encodeWgmmaDescriptor(f);
    expect(decodeWgmmaDescriptor(d)).toEqual(f);
    const reserved = (3n << 14n) | (3n << 30n) | (7n << 46n) | (((1n << 10n) - 1n) << 52n);
    expect(d & reserved).toBe(0n);
    expect(d < 1n << 64n).toBe(true);
  });

  it('rejects what the hardware would silently truncate', () => {
    expect(() => encodeWgmmaDescriptor({ startAddress: 8, leadingByteOffset: 0, strideByteOffset: 0, swizzle: 'none' })).toThrow(
      /startAddress: must be 16-byte aligned/,
    );
    expect(() => encodeWgmmaDescriptor({ startAddress: 0, leadingByteOffset: 1 << 18, strideByteOffset: 0, swizzle: 'none' })).toThrow(
      WgmmaDescriptorError,
    );
    expect(() => encodeWgmmaDescriptor({ startAddress: 0, leadingByteOffset: 0, strideByteOffset: -16, swizzle: 'none' })).toThrow(
      /strideByteOffset/,
    );
    expect(() =>
      encodeWgmmaDescriptor({ startAddress: 0, leadingByteOffset: 0, strideByteOffset: 0, baseOffset: 8, swizzle: 'none' }),
    ).toThrow(/baseOffset/);
    expect(() => encodeWgmmaDescriptor({ startAddress: 0, leadingByteOffset: 0, strideByteOffset: 0, swizzle: '16B' as never })).toThrow(
      /swizzle/,
    );
    expect(() => decodeWgmmaDescriptor(1n << 15n)).toThrow(/reserved bits/);
    try {
      encodeWgmmaDescriptor({ startAddress: 8, leadingByteOffset: 0, strideByteOffset: 0, swizzle: 'none' });
    } catch (e) {
      expect((e as WgmmaDescriptorError).code).toBe('gemm/invalid-wgmma-descriptor');
    }
  });

  it('the emitted encoder is built from expression nodes (no string), with the ISA masks', () => {
    const text = renderFunction(defineWgmmaDescriptorEncoder(host));
    expect(text).toContain('unsigned long long tk_wgmma_desc_encode(unsigned int start_address');
    expect(text).toMatch(/start_address & 0x3ffff|start_address & 262143/i);
    expect(text).toMatch(/<< 62/);
  });

  const hasCxx = toolAvailable(process.env['TILEKIT_CXX'] ?? 'g++');
  if (!hasCxx) console.warn('\n!!! SKIPPING the emitted wgmma descriptor encoder g++ test: no host C++ compiler (set TILEKIT_CXX). !!!\n');
  it.skipIf(!hasCxx)('the emitted C++ encoder (compiled with g++) equals the TS encoder on random fields', () => {
    const fn = defineWgmmaDescriptorEncoder(host);
    const cases = fc.sample(fieldsArb, { numRuns: 300, seed: 6 });
    cases.push({ startAddress: 0x3fff0, leadingByteOffset: 0x3fff0, strideByteOffset: 0x3fff0, baseOffset: 7, swizzle: '32B' });
    const got = runHostFunctions(
      [fn],
      cases.map((f) => ({
        fn,
        args: [f.startAddress, f.leadingByteOffset, f.strideByteOffset, f.baseOffset ?? 0, wgmmaSwizzleCode(f.swizzle)],
      })),
    );
    expect(got).toEqual(cases.map((f) => encodeWgmmaDescriptor(f)));
  });
});
