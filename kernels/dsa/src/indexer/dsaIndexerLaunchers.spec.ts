import { ArgumentError } from '@tilekit/numeric';
import { checkTiledTensorMap, type DeviceRange } from '@tilekit/runtime';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkDsaIndexCacheWriteConfig, type DsaIndexCacheWriteConfig } from '../cache/dsaIndexCacheWriterLauncher.ts';
import { DsaArgumentError } from '../dsaArgumentError.ts';
import {
  checkDsaIndexerDecodeConfig,
  dsaIndexerDecodeBufferBytes,
  dsaIndexerDecodePagesPerCta,
  dsaIndexerDecodeTensorMaps,
  packDsaIndexerDecode,
  type DsaIndexerDecodeConfig,
} from './dsaIndexerDecodeLauncher.ts';
import {
  checkDsaIndexerPrefillConfig,
  dsaIndexerPrefillBufferBytes,
  dsaIndexerPrefillTensorMaps,
  packDsaIndexerPrefill,
  type DsaIndexerPrefillConfig,
} from './dsaIndexerPrefillLauncher.ts';

const encode = (): Uint8Array => new Uint8Array(128);

/** Disjoint fake device ranges of the given sizes (256-aligned), one of them optionally a byte short or misaligned. */
function fakeBuffers<K extends string>(
  bytes: Readonly<Record<K, number>>,
  broken?: { key: NoInfer<K>; how: 'short' | 'misaligned' },
): Record<K, DeviceRange> {
  let ptr = 0x10000n;
  const out = {} as Record<K, DeviceRange>;
  for (const key of Object.keys(bytes) as K[]) {
    const n = bytes[key];
    const short = broken?.key === key && broken.how === 'short';
    const shift = broken?.key === key && broken.how === 'misaligned' ? 4n : 0n;
    out[key] = { ptr: ptr + shift, bytes: short ? n - 1 : n } as DeviceRange;
    ptr += BigInt(Math.ceil(n / 256) * 256 + 512);
  }
  return out;
}

const decode: DsaIndexerDecodeConfig = { batch: 3, nextN: 2, heads: 64, maxContext: 1000, maxPages: 16, numPages: 64 };
const prefill: DsaIndexerPrefillConfig = { seqQ: 259, seqKv: 4097, heads: 32 };

describe('checkDsaIndexerDecodeConfig', () => {
  it('defaults logitsStride to maxContext and reports every broken field by name', () => {
    expect(checkDsaIndexerDecodeConfig(decode).logitsStride).toBe(1000);
    const bad = { batch: 0, nextN: 3, heads: 48, maxContext: 1000, maxPages: 15, numPages: 0, logitsStride: 999 };
    try {
      checkDsaIndexerDecodeConfig(bad);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(DsaArgumentError);
      const names = (e as DsaArgumentError).problems.map((p) => p.argument);
      expect(names).toEqual(['batch', 'numPages', 'nextN', 'heads', 'maxPages', 'logitsStride']);
    }
  });

  it('fuzz: any config either checks or throws DsaArgumentError (never another error)', () => {
    const anyValue = fc.oneof(fc.integer({ min: -5, max: 70000 }), fc.double(), fc.constant(undefined), fc.string(), fc.constant(null));
    fc.assert(
      fc.property(
        fc.record({ batch: anyValue, nextN: anyValue, heads: anyValue, maxContext: anyValue, maxPages: anyValue, numPages: anyValue }),
        (c) => {
          try {
            checkDsaIndexerDecodeConfig(c as unknown as DsaIndexerDecodeConfig);
          } catch (e) {
            expect(e).toBeInstanceOf(DsaArgumentError);
          }
        },
      ),
      { numRuns: 400 },
    );
  });
});

describe('packDsaIndexerDecode', () => {
  it('valid configs give tensor maps the driver rules accept and one wave of CTAs', () => {
    fc.assert(
      fc.property(
        fc.record({
          batch: fc.integer({ min: 1, max: 256 }),
          nextN: fc.constantFrom(1, 2),
          heads: fc.constantFrom(32, 64),
          maxContext: fc.integer({ min: 1, max: 262144 }),
        }),
        (raw) => {
          const maxPages = Math.ceil(raw.maxContext / 64);
          const c = checkDsaIndexerDecodeConfig({ ...raw, maxPages, numPages: raw.batch * maxPages });
          const maps = dsaIndexerDecodeTensorMaps(c, 0x10000n, 0x200000n);
          for (const m of [maps.q, maps.kv, maps.scale]) checkTiledTensorMap(m);
          const ppc = dsaIndexerDecodePagesPerCta(c, 132);
          expect(Math.ceil(maxPages / ppc) * raw.batch).toBeLessThanOrEqual(Math.max(264 + raw.batch, raw.batch));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('packs the catalog instance; names a short, misaligned or overlapping buffer', () => {
    const c = checkDsaIndexerDecodeConfig(decode);
    const bytes = dsaIndexerDecodeBufferBytes(c);
    const packed = packDsaIndexerDecode(c, fakeBuffers(bytes), encode, 132);
    expect(packed.instance.name).toBe('dsa_indexer_decode_h64_n2_s8');
    expect(packed.grid[1]).toBe(3);
    expect(() => packDsaIndexerDecode(c, fakeBuffers(bytes, { key: 'cache', how: 'short' }), encode, 132)).toThrow(/buffers\.cache/);
    expect(() => packDsaIndexerDecode(c, fakeBuffers(bytes, { key: 'q', how: 'misaligned' }), encode, 132)).toThrow(/buffers\.q/);
    const overlapping = { ...fakeBuffers(bytes), logits: fakeBuffers(bytes).weights };
    expect(() =>
      packDsaIndexerDecode(c, { ...overlapping, logits: { ptr: overlapping.logits.ptr, bytes: bytes.logits } as DeviceRange }, encode, 132),
    ).toThrow(ArgumentError);
  });
});

describe('checkDsaIndexCacheWriteConfig', () => {
  it('names every broken field; fuzz: any config either checks or throws DsaArgumentError', () => {
    expect(checkDsaIndexCacheWriteConfig({ tokens: 0, numPages: 1, scaleFormat: 'ue8m0' }).keyStride).toBe(128);
    expect(() => checkDsaIndexCacheWriteConfig({ tokens: 3, numPages: 1, scaleFormat: 'fp32', keyStride: 130 })).toThrow(/keyStride/);
    const anyValue = fc.oneof(fc.integer({ min: -5, max: 300 }), fc.double(), fc.constant(undefined), fc.string(), fc.constant('ue8m0'));
    fc.assert(
      fc.property(fc.record({ tokens: anyValue, numPages: anyValue, keyStride: anyValue, scaleFormat: anyValue }), (c) => {
        try {
          checkDsaIndexCacheWriteConfig(c as unknown as DsaIndexCacheWriteConfig);
        } catch (e) {
          expect(e).toBeInstanceOf(DsaArgumentError);
        }
      }),
      { numRuns: 400 },
    );
  });
});

describe('checkDsaIndexerPrefillConfig and packDsaIndexerPrefill', () => {
  it('checks fields by name, defaults logitsStride to seqKv', () => {
    expect(checkDsaIndexerPrefillConfig(prefill).logitsStride).toBe(4097);
    expect(() => checkDsaIndexerPrefillConfig({ seqQ: 0, seqKv: 1, heads: 64 })).toThrow(/seqQ/);
    expect(() => checkDsaIndexerPrefillConfig({ seqQ: 1, seqKv: 100, heads: 64, logitsStride: 99 })).toThrow(/logitsStride/);
    expect(() => checkDsaIndexerPrefillConfig({ seqQ: 1, seqKv: 1, heads: 16 })).toThrow(/heads/);
  });

  it('valid configs give tensor maps the driver rules accept', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 65536 }),
        fc.integer({ min: 1, max: 1 << 20 }),
        fc.constantFrom(32, 64),
        (seqQ, seqKv, heads) => {
          const c = checkDsaIndexerPrefillConfig({ seqQ, seqKv, heads });
          const maps = dsaIndexerPrefillTensorMaps(c, 0x10000n, 0x400000n, 0x800000n);
          for (const m of [maps.q, maps.kv, maps.scale]) checkTiledTensorMap(m);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('fuzz: any prefill config either checks or throws DsaArgumentError (never another error)', () => {
    const anyValue = fc.oneof(fc.integer({ min: -5, max: 70000 }), fc.double(), fc.constant(undefined), fc.string(), fc.constant(null));
    fc.assert(
      fc.property(fc.record({ seqQ: anyValue, seqKv: anyValue, heads: anyValue, logitsStride: anyValue }), (c) => {
        try {
          checkDsaIndexerPrefillConfig(c as unknown as DsaIndexerPrefillConfig);
        } catch (e) {
          expect(e).toBeInstanceOf(DsaArgumentError);
        }
      }),
      { numRuns: 400 },
    );
  });

  it('packs one CTA per 256 / H queries; names a short buffer', () => {
    const c = checkDsaIndexerPrefillConfig(prefill);
    const bytes = dsaIndexerPrefillBufferBytes(c);
    const packed = packDsaIndexerPrefill(c, fakeBuffers(bytes), encode);
    expect(packed.grid[0]).toBe(Math.ceil(259 / 8));
    expect(() => packDsaIndexerPrefill(c, fakeBuffers(bytes, { key: 'windowEnd', how: 'short' }), encode)).toThrow(/buffers\.windowEnd/);
    expect(() => packDsaIndexerPrefill(c, fakeBuffers(bytes, { key: 'kScales', how: 'misaligned' }), encode)).toThrow(/buffers\.kScales/);
  });
});
