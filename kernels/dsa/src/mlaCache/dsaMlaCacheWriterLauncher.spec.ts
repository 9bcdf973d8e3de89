import fc from 'fast-check';
import { ArgumentError } from '@tilekit/numeric';
import type { DeviceRange } from '@tilekit/runtime';
import { describe, expect, it } from 'vitest';
import { DsaArgumentError } from '../dsaArgumentError.ts';
import { DSA_MLA_CACHE_WRITER_CATALOG } from './dsaMlaCacheWriterCatalog.ts';
import { DsaMlaCacheWriterInstance } from './dsaMlaCacheWriterInstance.ts';
import {
  checkDsaMlaCacheWriteConfig,
  dsaMlaCacheWriteBufferBytes,
  packDsaMlaCacheWrite,
  type DsaMlaCacheWriteBuffers,
  type DsaMlaCacheWriteConfig,
} from './dsaMlaCacheWriterLauncher.ts';

/** Fake device ranges of the given sizes, 1 MiB apart (never dereferenced). */
function fakeBuffers(bytes: { latent: number; slots: number; cache: number }): DsaMlaCacheWriteBuffers {
  return {
    latent: { ptr: 0x10_0000n, bytes: bytes.latent },
    slots: { ptr: 0x100_0000n, bytes: bytes.slots },
    cache: { ptr: 0x1000_0000n, bytes: bytes.cache },
  };
}

describe('DsaMlaCacheWriterInstance', () => {
  it('is one 8-warp instance; one warp per token; its source stores 16-byte words and shuffles within 8-lane tiles', () => {
    const [instance] = DSA_MLA_CACHE_WRITER_CATALOG;
    expect(DSA_MLA_CACHE_WRITER_CATALOG.length).toBe(1);
    expect(instance!.name).toBe('dsa_mla_cache_writer_w8');
    expect(instance!.launch(17)).toEqual({ grid: [3, 1, 1], block: [256, 1, 1] });
    expect(instance!.launch(0).grid).toEqual([1, 1, 1]);
    const source = instance!.source();
    expect(source).toContain('cvt.rn.satfinite.e4m3x2.f32');
    expect(source).toContain('reinterpret_cast<uint4*>(dst)[lane] = packed;');
    expect(source).toContain('(__float_as_uint(ratio) + 0x7fffffu) & 0xff800000u');
    expect(source).not.toContain('__shfl_xor_sync(0xffffffffu, amax, 8)');
  });

  it('rejects a bad warp count', () => {
    for (const warps of [0, 33, 2.5, Number.NaN]) expect(() => new DsaMlaCacheWriterInstance({ warps })).toThrow(/policy\.warps/);
  });
});

describe('checkDsaMlaCacheWriteConfig and packDsaMlaCacheWrite', () => {
  it('defaults the strides; names every broken field', () => {
    const c = checkDsaMlaCacheWriteConfig({ tokens: 0, numPages: 1 });
    expect([c.latentStride, c.pageStride]).toEqual([576, 41984]);
    expect(() => checkDsaMlaCacheWriteConfig({ tokens: 3, numPages: 1, latentStride: 580 })).toThrow(/latentStride.*multiple of 8/);
    expect(() => checkDsaMlaCacheWriteConfig({ tokens: 3, numPages: 1, pageStride: 41984 + 8 })).toThrow(/pageStride/);
    expect(() => checkDsaMlaCacheWriteConfig({ tokens: -1, numPages: 0 })).toThrow(/tokens[\s\S]*numPages/);
  });

  it('fuzz: any config either checks or throws DsaArgumentError', () => {
    const anyValue = fc.oneof(fc.integer({ min: -5, max: 50_000 }), fc.double(), fc.constant(undefined), fc.string(), fc.constant(null));
    fc.assert(
      fc.property(fc.record({ tokens: anyValue, numPages: anyValue, latentStride: anyValue, pageStride: anyValue }), (c) => {
        try {
          checkDsaMlaCacheWriteConfig(c as unknown as DsaMlaCacheWriteConfig);
        } catch (e) {
          expect(e).toBeInstanceOf(DsaArgumentError);
        }
      }),
      { numRuns: 400 },
    );
  });

  it('sizes the buffers (the last page unpadded) and packs the catalog instance; names a short, misaligned or overlapping buffer', () => {
    const c = checkDsaMlaCacheWriteConfig({ tokens: 9, numPages: 3, latentStride: 640, pageStride: 65 * 656 });
    const bytes = dsaMlaCacheWriteBufferBytes(c);
    expect(bytes).toEqual({ latent: (8 * 640 + 576) * 2, slots: 36, cache: 2 * 65 * 656 + 41984 });
    const packed = packDsaMlaCacheWrite(c, fakeBuffers(bytes));
    expect(packed.instance.name).toBe('dsa_mla_cache_writer_w8');
    expect(packed.grid).toEqual([2, 1, 1]);
    expect(() => packDsaMlaCacheWrite(c, fakeBuffers({ ...bytes, cache: bytes.cache - 1 }))).toThrow(/buffers\.cache/);
    const misaligned = { ...fakeBuffers(bytes), latent: { ptr: 0x10_0008n, bytes: bytes.latent } as DeviceRange };
    expect(() => packDsaMlaCacheWrite(c, misaligned)).toThrow(/buffers\.latent.*16/);
    const overlapping = { ...fakeBuffers(bytes), cache: { ptr: 0x100_0000n + 16n, bytes: bytes.cache } as DeviceRange };
    expect(() => packDsaMlaCacheWrite(c, overlapping)).toThrow(ArgumentError);
    expect(() => packDsaMlaCacheWrite(c, null as unknown as DsaMlaCacheWriteBuffers)).toThrow(/buffers/);
  });
});
