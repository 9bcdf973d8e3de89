import { ArgumentError } from '@tilekit/numeric';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DsaArgumentError } from '../dsaArgumentError.ts';
import { dsaTopkToPageTable } from '../reference/dsaTopkToPageTable.ts';
import { DSA_TOPK_CATALOG, dsaTopkInstanceFor, dsaTopkVectorFor } from './dsaTopkCatalog.ts';
import { dsaTopkIndexOutput } from './dsaTopkIndexOutput.ts';
import { DsaTopkInstance } from './dsaTopkInstance.ts';
import { checkDsaTopkConfig, dsaTopkBufferBytes, packDsaTopk, type DsaTopkBuffers, type DsaTopkConfig } from './dsaTopkLauncher.ts';
import { dsaTopkOutputReference } from './dsaTopkOutput.ts';
import { dsaTopkPageTableOutput } from './dsaTopkPageTableOutput.ts';

const config: DsaTopkConfig = { rows: 6, rowStride: 1000, k: 2048 };
const paged: DsaTopkConfig = { ...config, pageTable: { rowsPerSequence: 2, maxPages: 16 } };

/** Disjoint fake device ranges of exactly the needed bytes (16-byte aligned), one shrunk by a byte. */
function buffersFor(c: DsaTopkConfig, shrink?: keyof DsaTopkBuffers): DsaTopkBuffers {
  const bytes = dsaTopkBufferBytes(checkDsaTopkConfig(c));
  let ptr = 0x10000n;
  const out: Record<string, { ptr: bigint; bytes: number }> = {};
  for (const [key, n] of Object.entries(bytes)) {
    if (n === 0) continue;
    out[key] = { ptr, bytes: key === shrink ? n - 1 : n };
    ptr += BigInt(Math.ceil(n / 256) * 256 + 256);
  }
  return out as unknown as DsaTopkBuffers;
}

function errorOf(run: () => unknown): ArgumentError {
  try {
    run();
  } catch (e) {
    if (e instanceof ArgumentError) return e;
    throw e;
  }
  throw new Error('no error thrown');
}

describe('checkDsaTopkConfig', () => {
  it('accepts the index and page-table forms', () => {
    expect(checkDsaTopkConfig(config).output).toBe('index');
    expect(checkDsaTopkConfig(paged).output).toBe('pageTable');
    expect(checkDsaTopkConfig({ rows: 1, rowStride: 1, k: 4096 }).k).toBe(4096);
  });

  it.each([
    [{ k: 0 }, 'k'],
    [{ k: 4097 }, 'k'],
    [{ k: 1.5 }, 'k'],
    [{ rows: 0 }, 'rows'],
    [{ rowStride: 0 }, 'rowStride'],
    [{ rowStride: 2 ** 30 + 1 }, 'rowStride'],
    [{ rows: '2' }, 'rows'],
    [{ pageTable: { rowsPerSequence: 3, maxPages: 16 } }, 'pageTable.rowsPerSequence'],
    [{ rows: 5, pageTable: { rowsPerSequence: 2, maxPages: 16 } }, 'pageTable.rowsPerSequence'],
    [{ pageTable: { rowsPerSequence: 1, maxPages: 15 } }, 'pageTable.maxPages'],
    [{ pageTable: null }, 'pageTable'],
  ] as const)('rejects %o naming %s', (patch, name) => {
    const error = errorOf(() => checkDsaTopkConfig({ ...config, ...(patch as object) } as DsaTopkConfig));
    expect(error).toBeInstanceOf(DsaArgumentError);
    expect(error.argument).toBe(name);
  });

  it('reports every broken field at once', () => {
    const error = errorOf(() => checkDsaTopkConfig({ rows: 0, rowStride: -1, k: 5000 }));
    expect(error.problems.map((p) => p.argument)).toEqual(['rows', 'rowStride', 'k']);
  });
});

describe('packDsaTopk', () => {
  it('packs the catalog instance for the form and the load width', () => {
    const p = packDsaTopk(checkDsaTopkConfig(config), buffersFor(config));
    expect(p.instance.policy.output.kind).toBe('index');
    expect(p.instance.policy.vector).toBe(4);
    expect(p.grid).toEqual([6, 1, 1]);
    expect(p.block).toEqual([1024, 1, 1]);
    expect(p.sharedBytes).toBe(p.instance.sharedBytes);
    const odd = { ...config, rowStride: 999 };
    expect(packDsaTopk(checkDsaTopkConfig(odd), buffersFor(odd)).instance.policy.vector).toBe(1);
    expect(packDsaTopk(checkDsaTopkConfig(paged), buffersFor(paged)).instance.policy.output.kind).toBe('pageTable');
  });

  it('takes null or absent lengths as full rows', () => {
    const { lengths: _l, ...rest } = buffersFor(config);
    const unpacked = (b: DsaTopkBuffers) => {
      const p = packDsaTopk(checkDsaTopkConfig(config), b);
      return p.instance.signature.unpack(p.args.bytes);
    };
    expect(unpacked(rest)['lengths']).toBe(0n);
    expect(unpacked({ ...rest, lengths: null })['lengths']).toBe(0n);
  });

  it.each(['logits', 'out', 'lengths'] as const)('rejects a short %s buffer naming it', (key) => {
    expect(errorOf(() => packDsaTopk(checkDsaTopkConfig(config), buffersFor(config, key))).argument).toBe(`buffers.${key}`);
  });

  it('needs the block table with the page-table form only', () => {
    expect(errorOf(() => packDsaTopk(checkDsaTopkConfig(paged), buffersFor(paged, 'blockTable'))).argument).toBe('buffers.blockTable');
    const { blockTable: _b, ...none } = buffersFor(paged);
    expect(errorOf(() => packDsaTopk(checkDsaTopkConfig(paged), none)).argument).toBe('buffers.blockTable');
    const stray = { ...buffersFor(config), blockTable: { ptr: 0x900000n, bytes: 64 } };
    expect(errorOf(() => packDsaTopk(checkDsaTopkConfig(config), stray)).argument).toBe('buffers.blockTable');
  });

  it('rejects misaligned buffers and an output overlapping an input', () => {
    const b = buffersFor(config);
    expect(
      errorOf(() => packDsaTopk(checkDsaTopkConfig(config), { ...b, out: { ptr: b.out.ptr + 2n, bytes: b.out.bytes } })).argument,
    ).toBe('buffers.out');
    const overlapping = { ...b, out: { ptr: b.logits.ptr + 64n, bytes: b.out.bytes } };
    const error = errorOf(() => packDsaTopk(checkDsaTopkConfig(config), overlapping));
    expect(error.argument).toBe('buffers.out');
    expect(error.message).toMatch(/overlap buffers.logits/);
  });
});

describe('top-k catalog and output hooks', () => {
  it('has one instance per form and load width, with distinct names', () => {
    expect(DSA_TOPK_CATALOG.map((i) => i.name)).toEqual([
      'dsa_topk_index_t1024_v4_u2_l16384',
      'dsa_topk_index_t1024_v1_u2_l16384',
      'dsa_topk_pageTable_t1024_v4_u2_l16384',
      'dsa_topk_pageTable_t1024_v1_u2_l16384',
    ]);
    expect(dsaTopkInstanceFor('pageTable', 1).policy.vector).toBe(1);
    expect([dsaTopkVectorFor(8, 0x1000n), dsaTopkVectorFor(8, 0x1004n), dsaTopkVectorFor(6, 0x1000n)]).toEqual([4, 1, 1]);
  });

  it('rejects a policy outside the rules', () => {
    const policy = { threads: 1024, vector: 4, unroll: 4, listCapacity: 16384, output: dsaTopkIndexOutput } as const;
    expect(() => new DsaTopkInstance({ ...policy, threads: 100 })).toThrow(/policy.threads/);
    expect(() => new DsaTopkInstance({ ...policy, vector: 2 as 4 })).toThrow(/policy.vector/);
    expect(() => new DsaTopkInstance({ ...policy, listCapacity: 1000 })).toThrow(/policy.listCapacity/);
    expect(() => new DsaTopkInstance({ ...policy, unroll: 3 })).toThrow(/policy.unroll/);
  });

  it('converts positions to page-table slots, keeping −1', () => {
    const table = { blockTable: [7, 3, 9, 1, 100, 200, 300, 400], maxPages: 4, rowsPerSequence: 2 };
    expect(dsaTopkPageTableOutput.value(0, 70, table)).toBe(3 * 64 + 6);
    expect(dsaTopkPageTableOutput.value(3, 130, table)).toBe(300 * 64 + 2);
    const positions = Int32Array.from([0, 63, -1, 64, 255, -1]);
    expect([...dsaTopkOutputReference(positions, 3, dsaTopkPageTableOutput, table)]).toEqual([448, 511, -1, 192, 127, -1]);
    expect([...dsaTopkOutputReference(positions, 3, dsaTopkIndexOutput)]).toEqual([...positions]);
    expect(() => dsaTopkPageTableOutput.value(0, 1)).toThrow(DsaArgumentError);
  });

  it('converts as dsaTopkToPageTable does (the reference of the page-table form)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 6 }), fc.constantFrom(1, 2), fc.integer({ min: 1, max: 9 }), fc.nat(), (seqs, rps, k, seed) => {
        const rows = seqs * rps;
        const maxPages = 1 + (seed % 5);
        const blockTable = Int32Array.from({ length: seqs * maxPages }, (_, i) => (i * 7919 + seed) % 100_000);
        const positions = Int32Array.from({ length: rows * k }, (_, i) => ((i * 2654435761 + seed) % (maxPages * 64 + 1)) - 1);
        const table = { blockTable, maxPages, rowsPerSequence: rps };
        expect(dsaTopkOutputReference(positions, k, dsaTopkPageTableOutput, table)).toEqual(
          dsaTopkToPageTable(positions, rows, k, blockTable, maxPages, rps),
        );
      }),
      { numRuns: 200, seed: 20_04 },
    );
  });

  it('emits the page-table conversion and the 16-byte loads into the source', () => {
    const src = dsaTopkInstanceFor('pageTable', 4).source();
    expect(src).toContain('block_table[');
    expect(src).toContain('reinterpret_cast<const float4*>');
    expect(dsaTopkInstanceFor('index', 1).source()).not.toContain('float4');
  });
});
