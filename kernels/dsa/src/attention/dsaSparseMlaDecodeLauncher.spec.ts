import type { ArgumentError } from '@tilekit/numeric';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { dsaFakeDeviceRanges } from '../testing/dsaFakeDeviceRanges.ts';
import { checkDsaSparseMlaDecodeConfig, type DsaSparseMlaDecodeConfig } from '../checkDsaSparseMlaConfig.ts';
import { DsaArgumentError } from '../dsaArgumentError.ts';
import {
  dsaSparseMlaDecodeBufferBytes,
  dsaSparseMlaDecodeSplit,
  packDsaSparseMlaDecode,
  type DsaSparseMlaDecodeBuffers,
} from './dsaSparseMlaDecodeLauncher.ts';

const base: DsaSparseMlaDecodeConfig = {
  b: 1,
  sQ: 1,
  hQ: 128,
  topk: 2048,
  numPages: 40,
  pageStrideBytes: 41984,
  smScale: 0.135234,
  hasSink: true,
  hasTopkLength: false,
};

/** Disjoint fake device ranges of exactly the needed bytes, 256-aligned. */
function buffersFor(c: DsaSparseMlaDecodeConfig, splits: number): DsaSparseMlaDecodeBuffers {
  return dsaFakeDeviceRanges(dsaSparseMlaDecodeBufferBytes(c, splits)) as DsaSparseMlaDecodeBuffers;
}

const errorOf = (f: () => unknown): ArgumentError => {
  try {
    f();
  } catch (e) {
    return e as ArgumentError;
  }
  throw new Error('did not throw');
};

describe('dsaSparseMlaDecodeSplit', () => {
  it('covers every tile exactly once: splits · tilesPerSplit ≥ tiles > (splits − 1) · tilesPerSplit, for any request', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 512 }),
        fc.constantFrom(1, 2),
        fc.constantFrom(64, 128),
        fc.integer({ min: 1, max: 32768 }),
        fc.option(fc.integer({ min: 1, max: 2000 }), { nil: undefined }),
        (b, sQ, hQ, topk, requested) => {
          const c = checkDsaSparseMlaDecodeConfig({ ...base, b, sQ, hQ, topk });
          const tiles = Math.ceil(topk / 32);
          const s = dsaSparseMlaDecodeSplit(c, 132, requested);
          expect(s.splits * s.tilesPerSplit).toBeGreaterThanOrEqual(tiles);
          expect((s.splits - 1) * s.tilesPerSplit).toBeLessThan(tiles);
          if (requested === undefined && b * sQ * (hQ / 64) >= 132) expect(s.splits).toBe(1);
        },
      ),
    );
  });

  it('splits a small batch into even tile runs and leaves a full one whole', () => {
    expect(dsaSparseMlaDecodeSplit(checkDsaSparseMlaDecodeConfig(base), 132)).toEqual({ splits: 32, tilesPerSplit: 2 });
    expect(dsaSparseMlaDecodeSplit(checkDsaSparseMlaDecodeConfig({ ...base, b: 32 }), 132)).toEqual({ splits: 2, tilesPerSplit: 32 });
    expect(dsaSparseMlaDecodeSplit(checkDsaSparseMlaDecodeConfig({ ...base, b: 128 }), 132)).toEqual({ splits: 1, tilesPerSplit: 64 });
    expect(() => dsaSparseMlaDecodeSplit(checkDsaSparseMlaDecodeConfig(base), 132, 0)).toThrow(DsaArgumentError);
  });
});

describe('packDsaSparseMlaDecode', () => {
  it('packs the final instance alone for one split, the partial decode and the combine otherwise', () => {
    const c = checkDsaSparseMlaDecodeConfig(base);
    const one = packDsaSparseMlaDecode(c, buffersFor(c, 1), { smCount: 132, splits: 1 });
    expect(one.decode.instance.policy.output).toBe('final');
    expect(one.decode.grid).toEqual([2, 1, 1]);
    expect(one.combine).toBeUndefined();
    const many = packDsaSparseMlaDecode(c, buffersFor(c, 32), { smCount: 132 });
    expect(many.decode.instance.policy.output).toBe('partial');
    expect(many.decode.grid).toEqual([2, 32, 1]);
    expect(many.combine?.grid).toEqual([128, 1, 1]);
  });

  it('names a short workspace, a missing one, one that one split does not read, and an output overlapping the cache', () => {
    const c = checkDsaSparseMlaDecodeConfig(base);
    const b = buffersFor(c, 32);
    const short = { ...b, workspace: { ...b.workspace!, bytes: b.workspace!.bytes - 1 } };
    expect(errorOf(() => packDsaSparseMlaDecode(c, short, { smCount: 132 })).argument).toBe('buffers.workspace');
    expect(errorOf(() => packDsaSparseMlaDecode(c, { ...b, workspace: undefined }, { smCount: 132 })).argument).toBe('buffers.workspace');
    expect(errorOf(() => packDsaSparseMlaDecode(c, b, { smCount: 132, splits: 1 })).argument).toBe('buffers.workspace');
    const overlap = errorOf(() => packDsaSparseMlaDecode(c, { ...b, out: { ptr: b.cache.ptr, bytes: b.out.bytes } }, { smCount: 132 }));
    expect(overlap.argument).toBe('buffers.out');
    expect(overlap.message).toMatch(/overlap buffers.cache/);
    expect(errorOf(() => packDsaSparseMlaDecode(c, { ...b, attnSink: undefined }, { smCount: 132 })).argument).toBe('buffers.attnSink');
  });
});
