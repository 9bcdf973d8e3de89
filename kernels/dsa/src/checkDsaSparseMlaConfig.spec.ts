import { describe, expect, it } from 'vitest';
import {
  checkDsaSparseMlaAttnSink,
  checkDsaSparseMlaDecodeConfig,
  checkDsaSparseMlaIndices,
  checkDsaSparseMlaPrefillConfig,
  checkDsaSparseMlaTopkLength,
  type DsaSparseMlaDecodeConfig,
  type DsaSparseMlaPrefillConfig,
} from './checkDsaSparseMlaConfig.ts';
import { DsaArgumentError } from './dsaArgumentError.ts';

const PREFILL: DsaSparseMlaPrefillConfig = {
  sQ: 4096,
  hQ: 128,
  sKv: 32769,
  topk: 2048,
  dQk: 576,
  dV: 512,
  smScale: 0.135234,
  hasSink: true,
  hasTopkLength: false,
};
const DECODE: DsaSparseMlaDecodeConfig = {
  b: 32,
  sQ: 2,
  hQ: 64,
  topk: 2048,
  numPages: 2048,
  pageStrideBytes: 41984,
  smScale: 0.135234,
  hasSink: false,
  hasTopkLength: true,
};

/** The arguments every problem of the thrown error names. */
function argumentsOf(run: () => unknown): string[] {
  try {
    run();
  } catch (e) {
    expect(e).toBeInstanceOf(DsaArgumentError);
    return (e as DsaArgumentError).problems.map((p) => p.argument);
  }
  throw new Error('did not throw');
}

describe('checkDsaSparseMlaPrefillConfig', () => {
  it('accepts valid configs (h 64 and 128, topk 1 and 32768) and returns a frozen copy', () => {
    const c = checkDsaSparseMlaPrefillConfig(PREFILL);
    expect(c).toEqual(PREFILL);
    expect(Object.isFrozen(c)).toBe(true);
    expect(() => checkDsaSparseMlaPrefillConfig({ ...PREFILL, hQ: 64, topk: 1, sKv: 1, sQ: 1 })).not.toThrow();
    expect(() => checkDsaSparseMlaPrefillConfig({ ...PREFILL, topk: 32768 })).not.toThrow();
  });

  it.each([
    ['hQ', { hQ: 96 }, /one of 64, 128/],
    ['hQ', { hQ: 32 }, /query heads/],
    ['dQk', { dQk: 512 }, /576/],
    ['dV', { dV: 576 }, /512/],
    ['topk', { topk: 0 }, /\[1, 32768\]/],
    ['topk', { topk: 32769 }, /\[1, 32768\]/],
    ['topk', { topk: 64.5 }, /integer/],
    ['sQ', { sQ: 0 }, /integer/],
    ['sQ', { sQ: 2 ** 31 }, /integer/],
    ['sKv', { sKv: 0 }, /integer/],
    ['smScale', { smScale: 0 }, /positive finite/],
    ['smScale', { smScale: Number.POSITIVE_INFINITY }, /positive finite/],
    ['smScale', { smScale: '0.1' }, /positive finite/],
    ['hasSink', { hasSink: 1 }, /boolean/],
    ['hasTopkLength', { hasTopkLength: undefined }, /boolean/],
  ] as const)('%s: %o', (argument, patch, rule) => {
    const run = (): unknown => checkDsaSparseMlaPrefillConfig({ ...PREFILL, ...patch } as unknown as DsaSparseMlaPrefillConfig);
    expect(argumentsOf(run)).toEqual([argument]);
    expect(run).toThrow(rule);
  });

  it('reports every problem at once', () => {
    expect(argumentsOf(() => checkDsaSparseMlaPrefillConfig({ ...PREFILL, hQ: 1, dV: 128, smScale: -1 }))).toEqual(['hQ', 'dV', 'smScale']);
  });

  it('a non-object config', () => {
    expect(argumentsOf(() => checkDsaSparseMlaPrefillConfig(null as unknown as DsaSparseMlaPrefillConfig))).toEqual(['config']);
  });
});

describe('checkDsaSparseMlaDecodeConfig', () => {
  it('accepts valid configs (s_q 1 and 2, the smallest and largest cache)', () => {
    expect(checkDsaSparseMlaDecodeConfig(DECODE)).toEqual(DECODE);
    expect(() => checkDsaSparseMlaDecodeConfig({ ...DECODE, sQ: 1, hQ: 128, numPages: 1 })).not.toThrow();
    expect(() => checkDsaSparseMlaDecodeConfig({ ...DECODE, numPages: 2 ** 25, pageStrideBytes: 41984 + 16 })).not.toThrow();
  });

  it.each([
    ['sQ', { sQ: 3 }, /one of 1, 2/],
    ['sQ', { sQ: 0 }, /one of 1, 2/],
    ['hQ', { hQ: 16 }, /64, 128/],
    ['b', { b: 0 }, /integer/],
    ['topk', { topk: 40000 }, /32768/],
    ['numPages', { numPages: 0 }, /integer/],
    ['numPages', { numPages: 2 ** 25 + 1 }, /33554432/],
    ['pageStrideBytes', { pageStrideBytes: 41983 }, /41984/],
    ['pageStrideBytes', { pageStrideBytes: 41992 }, /multiple of 16/],
    ['numPages', { numPages: 2 ** 25, pageStrideBytes: 2 ** 40 }, /2\^53/],
    ['smScale', { smScale: Number.NaN }, /positive finite/],
    ['hasSink', { hasSink: 'yes' }, /boolean/],
  ] as const)('%s: %o', (argument, patch, rule) => {
    const run = (): unknown => checkDsaSparseMlaDecodeConfig({ ...DECODE, ...patch } as unknown as DsaSparseMlaDecodeConfig);
    expect(argumentsOf(run)).toEqual([argument]);
    expect(run).toThrow(rule);
  });
});

describe('host checks of the index arrays', () => {
  it('indices: any int32 value is legal (invalid entries included); the type and length are not', () => {
    expect(() => checkDsaSparseMlaIndices(Int32Array.of(-1, 2 ** 31 - 1, -(2 ** 31), 0), 2, 2)).not.toThrow();
    expect(argumentsOf(() => checkDsaSparseMlaIndices(Uint32Array.of(1, 2), 1, 2))).toEqual(['indices']);
    expect(argumentsOf(() => checkDsaSparseMlaIndices([1, 2], 1, 2))).toEqual(['indices']);
    expect(() => checkDsaSparseMlaIndices(Int32Array.of(1, 2, 3), 1, 2)).toThrow(/rows·topk = 2/);
  });

  it('topk_length: each entry in [0, topk], every bad entry named', () => {
    expect(() => checkDsaSparseMlaTopkLength(Int32Array.of(0, 5, 3), 3, 5)).not.toThrow();
    expect(argumentsOf(() => checkDsaSparseMlaTopkLength(Int32Array.of(-1, 5, 6), 3, 5))).toEqual(['topkLength[0]', 'topkLength[2]']);
    expect(argumentsOf(() => checkDsaSparseMlaTopkLength(Int32Array.of(1), 3, 5))).toEqual(['topkLength']);
    expect(argumentsOf(() => checkDsaSparseMlaTopkLength(Float32Array.of(1), 1, 5))).toEqual(['topkLength']);
  });

  it('attn_sink: finite or −∞', () => {
    expect(() => checkDsaSparseMlaAttnSink(Float32Array.of(0, Number.NEGATIVE_INFINITY, -3.5), 3)).not.toThrow();
    expect(argumentsOf(() => checkDsaSparseMlaAttnSink(Float32Array.of(Number.NaN, 1, Number.POSITIVE_INFINITY), 3))).toEqual([
      'attnSink[0]',
      'attnSink[2]',
    ]);
    expect(argumentsOf(() => checkDsaSparseMlaAttnSink(Float32Array.of(1), 2))).toEqual(['attnSink']);
    expect(argumentsOf(() => checkDsaSparseMlaAttnSink(Float64Array.of(1), 1))).toEqual(['attnSink']);
  });
});
