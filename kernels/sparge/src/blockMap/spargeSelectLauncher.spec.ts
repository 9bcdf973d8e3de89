import { ArgumentError } from '@tilekit/numeric';
import { describe, expect, it } from 'vitest';
import { SpargeArgumentError } from '../spargeArgumentError.ts';
import { SPARGE_SELECT_CATALOG, spargeSelectInstanceFor, spargeSelectRowsPerCta } from './spargeSelectCatalog.ts';
import { SpargeSelectInstance } from './spargeSelectInstance.ts';
import {
  checkSpargeSelectConfig,
  packSpargeSelect,
  spargeSelectBufferBytes,
  type SpargeSelectBuffers,
  type SpargeSelectConfig,
} from './spargeSelectLauncher.ts';

const config: SpargeSelectConfig = {
  batch: 2,
  nhead: 4,
  nheadK: 2,
  headDim: 128,
  blockQ: 128,
  blockK: 64,
  seqlenQ: 1000,
  seqlenK: 1000,
  selection: 'topk',
  isCausal: true,
  attentionSink: true,
};

function buffersFor(c: SpargeSelectConfig, shrink?: keyof SpargeSelectBuffers): SpargeSelectBuffers {
  const bytes = spargeSelectBufferBytes(checkSpargeSelectConfig(c));
  let ptr = 0x1000n;
  const out: Record<string, { ptr: bigint; bytes: number }> = {};
  for (const [key, n] of Object.entries(bytes)) {
    out[key] = { ptr, bytes: key === shrink ? n - 1 : n };
    ptr += BigInt(Math.ceil(n / 256) * 256 + 256);
  }
  out['seqstartQ'] = { ptr, bytes: 4 * (c.batch + 1) };
  out['seqstartK'] = { ptr: ptr + 256n, bytes: 4 * (c.batch + 1) };
  return out as unknown as SpargeSelectBuffers;
}

describe('checkSpargeSelectConfig', () => {
  it('derives the padded grid in batch and group mode', () => {
    expect(checkSpargeSelectConfig(config).grid).toMatchObject({ qBlocksMax: 8, kBlocksMax: 16 });
    const { seqlenQ: _q, seqlenK: _k, ...rest } = config;
    const g = checkSpargeSelectConfig({ ...rest, seqstartQ: [0, 129, 129], seqstartK: [0, 64, 4160] });
    expect(g.grid).toMatchObject({ qBlocks: [2, 0], kBlocks: [1, 64], qBlocksMax: 2, kBlocksMax: 64 });
    expect(g.groupMode).toBe(true);
  });

  it.each([
    [{ batch: 0 }, 'batch'],
    [{ nheadK: 3 }, 'nheadK'],
    [{ headDim: 96 }, 'headDim'],
    [{ blockK: 48 }, 'blockK'],
    [{ seqlenK: -1 }, 'seqlenK'],
    [{ seqlenK: 64 * 4096 + 1 }, 'seqlenK'],
    [{ selection: 'top' }, 'selection'],
    [{ isCausal: 1 }, 'isCausal'],
    [{ seqstartQ: [0, 1, 2] }, 'seqlenQ/seqstartQ'],
  ] as const)('rejects %o naming %s', (patch, name) => {
    let error: unknown;
    try {
      checkSpargeSelectConfig({ ...config, ...(patch as object) } as SpargeSelectConfig);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SpargeArgumentError);
    expect((error as SpargeArgumentError).argument).toBe(name);
  });

  it('rejects bad group offsets by index', () => {
    const { seqlenQ: _q, seqlenK: _k, ...rest } = config;
    expect(() => checkSpargeSelectConfig({ ...rest, seqstartQ: [0, 5], seqstartK: [0, 5, 6] })).toThrow(/seqstartQ/);
    expect(() => checkSpargeSelectConfig({ ...rest, seqstartQ: [0, 5, 4], seqstartK: [0, 5, 6] })).toThrow(/seqstartQ\[2\]/);
  });
});

describe('packSpargeSelect', () => {
  it('packs the catalog instance for the head dim and key blocks', () => {
    const c = checkSpargeSelectConfig(config);
    const p = packSpargeSelect(c, buffersFor(config));
    expect(p.instance.policy).toEqual({ headDim: 128, rowsPerCta: 8 });
    expect(p.grid).toEqual([1, 4, 2]);
    expect(p.block).toEqual([256, 1, 1]);
  });

  it.each(['pooledQ', 'simK', 'simthreshd1', 'lut', 'validBlockNum', 'visited'] as const)('rejects a short %s buffer naming it', (key) => {
    expect(() => packSpargeSelect(checkSpargeSelectConfig(config), buffersFor(config, key))).toThrow(ArgumentError);
    expect(() => packSpargeSelect(checkSpargeSelectConfig(config), buffersFor(config, key))).toThrow(`buffers.${key}`);
  });

  it('needs the seqstart buffers in group mode', () => {
    const { seqlenQ: _q, seqlenK: _k, ...rest } = config;
    const g = { ...rest, seqstartQ: [0, 100, 300], seqstartK: [0, 100, 300] };
    const { seqstartK: _s, ...noStarts } = buffersFor(g);
    expect(() => packSpargeSelect(checkSpargeSelectConfig(g), noStarts)).toThrow('buffers.seqstartK');
  });
});

describe('selection catalog', () => {
  it('takes 8 rows per CTA up to 512 key blocks and halves with the sort capacity', () => {
    expect([1, 128, 512, 513, 1024, 2048, 4096].map(spargeSelectRowsPerCta)).toEqual([8, 8, 8, 4, 4, 2, 1]);
    expect(() => spargeSelectRowsPerCta(4097)).toThrow(SpargeArgumentError);
  });

  it('covers every head dim and row count once, with distinct names', () => {
    expect(SPARGE_SELECT_CATALOG.map((i) => `${i.policy.headDim}/${i.policy.rowsPerCta}`)).toEqual([
      '64/1',
      '64/2',
      '64/4',
      '64/8',
      '128/1',
      '128/2',
      '128/4',
      '128/8',
    ]);
    expect(new Set(SPARGE_SELECT_CATALOG.map((i) => i.name)).size).toBe(8);
    expect(spargeSelectInstanceFor(64, 2048).policy).toEqual({ headDim: 64, rowsPerCta: 2 });
  });

  it('rejects a policy outside the catalog rules', () => {
    expect(() => new SpargeSelectInstance({ headDim: 96, rowsPerCta: 1 })).toThrow(/policy.headDim/);
    expect(() => new SpargeSelectInstance({ headDim: 64, rowsPerCta: 3 })).toThrow(/policy.rowsPerCta/);
  });
});
