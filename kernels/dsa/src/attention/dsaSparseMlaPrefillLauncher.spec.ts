import type { ArgumentError } from '@tilekit/numeric';
import { describe, expect, it } from 'vitest';
import { dsaFakeDeviceRanges } from '../testing/dsaFakeDeviceRanges.ts';
import { checkDsaSparseMlaPrefillConfig, type DsaSparseMlaPrefillConfig } from '../checkDsaSparseMlaConfig.ts';
import { DsaArgumentError } from '../dsaArgumentError.ts';
import { packDsaSparseMlaPrefill, type DsaSparseMlaPrefillBuffers } from './dsaSparseMlaPrefillLauncher.ts';

const base: DsaSparseMlaPrefillConfig = {
  sQ: 5,
  hQ: 128,
  sKv: 100,
  topk: 70,
  dQk: 576,
  dV: 512,
  smScale: 0.135234,
  hasSink: true,
  hasTopkLength: false,
};

/** Disjoint fake device ranges of exactly the needed bytes, 256-aligned. */
function buffersFor(c: DsaSparseMlaPrefillConfig): DsaSparseMlaPrefillBuffers {
  const rows = c.sQ * c.hQ;
  const bytes = {
    q: rows * 576 * 2,
    kv: c.sKv * 576 * 2,
    indices: c.sQ * c.topk * 4,
    topkLength: c.hasTopkLength ? c.sQ * 4 : 0,
    attnSink: c.hasSink ? c.hQ * 4 : 0,
    out: rows * 512 * 2,
    maxLogits: rows * 4,
    lse: rows * 4,
  };
  return dsaFakeDeviceRanges(bytes) as DsaSparseMlaPrefillBuffers;
}

const errorOf = (f: () => unknown): ArgumentError => {
  try {
    f();
  } catch (e) {
    return e as ArgumentError;
  }
  throw new Error('did not throw');
};

describe('packDsaSparseMlaPrefill', () => {
  it('packs one block per token and 64 heads with the instance shared memory', () => {
    const c = checkDsaSparseMlaPrefillConfig(base);
    const p = packDsaSparseMlaPrefill(c, buffersFor(c));
    expect(p.grid).toEqual([10, 1, 1]);
    expect(p.block).toEqual([384, 1, 1]);
    expect(p.sharedBytes).toBe(p.instance.sharedBytes);
  });

  it('names a short buffer, a buffer the config does not read, one it needs, and an output overlapping an input', () => {
    const c = checkDsaSparseMlaPrefillConfig(base);
    const b = buffersFor(c);
    expect(errorOf(() => packDsaSparseMlaPrefill(c, { ...b, kv: { ...b.kv, bytes: b.kv.bytes - 1 } })).argument).toBe('buffers.kv');
    expect(errorOf(() => packDsaSparseMlaPrefill(c, { ...b, topkLength: b.lse })).argument).toBe('buffers.topkLength');
    expect(errorOf(() => packDsaSparseMlaPrefill(c, { ...b, attnSink: undefined })).argument).toBe('buffers.attnSink');
    const overlap = errorOf(() => packDsaSparseMlaPrefill(c, { ...b, lse: { ptr: b.q.ptr, bytes: b.lse.bytes } }));
    expect(overlap.argument).toBe('buffers.lse');
    expect(overlap.message).toMatch(/overlap buffers.q/);
  });

  it('rejects a launch whose grid would pass 2^31 − 1 blocks before looking at buffers', () => {
    const c = checkDsaSparseMlaPrefillConfig({ ...base, sQ: 2 ** 31 - 1 });
    const e = errorOf(() => packDsaSparseMlaPrefill(c, buffersFor(base)));
    expect(e).toBeInstanceOf(DsaArgumentError);
    expect(e.argument).toBe('config.sQ');
  });
});
