import { ArgumentError } from '@tilekit/numeric';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DsaArgumentError } from '../dsaArgumentError.ts';
import { dsaTopkToPageTable } from '../reference/dsaTopkToPageTable.ts';
import {
  DSA_TOPK_CATALOG,
  DSA_TOPK_CLUSTER_CATALOG,
  DSA_TOPK_CLUSTER_MAX_ROW_STRIDE,
  dsaTopkClusterInstanceFor,
  dsaTopkClusterSizeFor,
  dsaTopkInstanceFor,
  dsaTopkVectorFor,
} from './dsaTopkCatalog.ts';
import { DsaTopkClusterInstance } from './dsaTopkClusterInstance.ts';
import { dsaTopkIndexOutput } from './dsaTopkIndexOutput.ts';
import { DSA_TOPK_MAX_ROW_STRIDE, DsaTopkInstance } from './dsaTopkInstance.ts';
import {
  checkDsaTopkConfig,
  dsaTopkBufferBytes,
  dsaTopkInstanceForLaunch,
  packDsaTopk,
  type DsaTopkAnyInstance,
  type DsaTopkBuffers,
  type DsaTopkConfig,
} from './dsaTopkLauncher.ts';
import { dsaTopkOutputReference } from './dsaTopkOutput.ts';
import { dsaTopkPageTableOutput } from './dsaTopkPageTableOutput.ts';
import { DsaTopkTwoReadInstance } from './dsaTopkTwoReadInstance.ts';
import { DSA_TOPK_TWO_READ_MIN_ROW_STRIDE, DSA_TOPK_TWO_READ_MIN_ROWS, dsaTopkPrefersTwoRead } from './dsaTopkTwoReadCatalog.ts';

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
    expect(p.instance.name).toBe('dsa_topk_cluster_index_c1_t512_v4_u8');
    expect(p.instance.policy.output.kind).toBe('index');
    expect(p.instance.policy.vector).toBe(4);
    expect(p.grid).toEqual([6, 1, 1]);
    expect(p.block).toEqual([512, 1, 1]);
    expect(p.sharedBytes).toBe(p.instance.sharedBytes);
    const odd = { ...config, rowStride: 999 };
    expect(packDsaTopk(checkDsaTopkConfig(odd), buffersFor(odd)).instance.policy.vector).toBe(1);
    expect(packDsaTopk(checkDsaTopkConfig(paged), buffersFor(paged)).instance.policy.output.kind).toBe('pageTable');
  });

  it('dispatches rows up to 131072 to the cluster kernel (C CTAs per row in the grid), long rows in large launches and longer rows to one CTA per row', () => {
    const at = (rows: number, rowStride: number) => {
      const c = { rows, rowStride, k: 2048 };
      const p = packDsaTopk(checkDsaTopkConfig(c), buffersFor(c));
      return `${p.instance.name} grid ${p.grid[0]}`;
    };
    expect(at(1, 8192)).toBe('dsa_topk_cluster_index_c1_t512_v4_u8 grid 1');
    expect(at(1, 8193)).toBe('dsa_topk_cluster_index_c2_t512_v1_u32 grid 2');
    expect(at(2, 65536)).toBe('dsa_topk_cluster_index_c8_t512_v4_u8 grid 16');
    expect(at(40, 65536)).toBe('dsa_topk_cluster_index_c4_t512_v4_u8 grid 160');
    expect(at(3, 131072)).toBe('dsa_topk_cluster_index_c8_t512_v4_u8 grid 24');
    expect(at(128, 131072)).toBe('dsa_topk_2r_index_t1024_v4_u2_l16384 grid 128');
    expect(at(128, 32768)).toBe('dsa_topk_2r_index_t1024_v4_u2_l16384 grid 128');
    expect(at(128, 16384)).toBe('dsa_topk_cluster_index_c1_t512_v4_u8 grid 128');
    expect(at(1, 131073)).toBe('dsa_topk_2r_index_t1024_v1_u2_l16384 grid 1');
    expect(at(1, 131076)).toBe('dsa_topk_2r_index_t1024_v4_u2_l16384 grid 1');
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

describe('the cluster size rule', () => {
  it(
    'spreads small launches over slices of 8192, takes the fewest CTAs per row otherwise, ' +
      'and leaves long rows and large clustered launches to one CTA per row',
    () => {
      const table = [1, 2, 32, 128, 1024].map((rows) =>
        [8192, 8193, 16384, 32768, 65536, 131072].map((l) => dsaTopkClusterSizeFor(rows, l)),
      );
      expect(table).toEqual([
        [1, 2, 2, 4, 8, 8],
        [1, 2, 2, 4, 8, 8],
        [1, 1, 1, 2, 4, 8],
        [1, 1, 1, 2, 4, undefined],
        [1, 1, 1, undefined, undefined, undefined],
      ]);
      expect(dsaTopkClusterSizeFor(1, DSA_TOPK_CLUSTER_MAX_ROW_STRIDE + 1)).toBeUndefined();
      expect(dsaTopkClusterSizeFor(2 ** 31 - 1, 131072)).toBeUndefined();
      expect(dsaTopkClusterSizeFor(2 ** 31 - 1, 100)).toBe(1);
      fc.assert(
        fc.property(fc.integer({ min: 1, max: 2 ** 31 - 1 }), fc.integer({ min: 1, max: DSA_TOPK_CLUSTER_MAX_ROW_STRIDE }), (rows, l) => {
          const c = dsaTopkClusterSizeFor(rows, l);
          if (c === undefined) return;
          expect(l).toBeLessThanOrEqual(dsaTopkClusterInstanceFor('index', 4, c).maxRowStride);
          expect(rows * c).toBeLessThanOrEqual(2 ** 31 - 1);
        }),
        { numRuns: 500, seed: 20_05 },
      );
    },
  );

  it('falls back to one CTA per row when rows × C would pass the grid or the clustered launch is large', () => {
    const huge = checkDsaTopkConfig({ rows: 2 ** 31 - 1, rowStride: 16384, k: 2048 });
    expect(dsaTopkInstanceForLaunch(huge, 0n).name).toBe('dsa_topk_cluster_index_c1_t512_v4_u8');
    const long = checkDsaTopkConfig({ rows: 1, rowStride: DSA_TOPK_CLUSTER_MAX_ROW_STRIDE + 4, k: 2048 });
    expect(dsaTopkInstanceForLaunch({ ...long, rowStride: 16384 * 12 }, 0n).name).toBe('dsa_topk_2r_index_t1024_v4_u2_l16384');
  });
});

describe('the two-read rule', () => {
  it('gives rows of 32K and more the two-read instance in launches of 128 rows or more, or where clusters do not serve', () => {
    const picked = [1, 32, 127, 128, 1024].map((rows) =>
      [16384, 32767, 32768, 131072, 262144].map((l) => dsaTopkInstanceForLaunch(checkDsaTopkConfig({ rows, rowStride: l, k: 2048 }), 0n)),
    );
    const short = (i: DsaTopkAnyInstance): string =>
      i instanceof DsaTopkTwoReadInstance ? '2r' : i instanceof DsaTopkClusterInstance ? `cluster_c${i.policy.cluster}` : 'single';
    expect(picked.map((r) => r.map(short))).toEqual([
      ['cluster_c2', 'cluster_c4', 'cluster_c4', 'cluster_c8', '2r'],
      ['cluster_c1', 'cluster_c2', 'cluster_c2', 'cluster_c8', '2r'],
      ['cluster_c1', 'cluster_c2', 'cluster_c2', '2r', '2r'],
      ['cluster_c1', 'cluster_c2', '2r', '2r', '2r'],
      ['cluster_c1', 'single', '2r', '2r', '2r'],
    ]);
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 4096 }), fc.integer({ min: 1, max: DSA_TOPK_MAX_ROW_STRIDE }), (rows, l) => {
        const twoRead = dsaTopkPrefersTwoRead({ rows, rowStride: l, k: 2048 });
        expect(twoRead).toBe(
          l >= DSA_TOPK_TWO_READ_MIN_ROW_STRIDE && (rows >= DSA_TOPK_TWO_READ_MIN_ROWS || dsaTopkClusterSizeFor(rows, l) === undefined),
        );
        const name = dsaTopkInstanceForLaunch(checkDsaTopkConfig({ rows, rowStride: l, k: 1 }), 0n).name;
        expect(name.startsWith('dsa_topk_2r_')).toBe(twoRead);
      }),
      { numRuns: 300, seed: 20_28 },
    );
  });
});

describe('top-k catalog and output hooks', () => {
  it('has one cluster instance per form, load width and cluster size: 512 threads of 32 keys, the cluster shape compiled in', () => {
    expect(DSA_TOPK_CLUSTER_CATALOG.map((i) => i.name)).toEqual(
      ['index', 'pageTable'].flatMap((o) =>
        ['v4_u8', 'v1_u32'].flatMap((v) => [1, 2, 4, 8].map((c) => `dsa_topk_cluster_${o}_c${c}_t512_${v}`)),
      ),
    );
    for (const i of DSA_TOPK_CLUSTER_CATALOG) {
      expect(i.sliceCapacity).toBe(16384);
      expect(i.maxRowStride).toBe(16384 * i.policy.cluster);
      expect(i.launch(3)).toEqual({
        grid: [3 * i.policy.cluster, 1, 1],
        block: [512, 1, 1],
        sharedBytes: i.sharedBytes,
        cluster: [i.policy.cluster, 1, 1],
      });
    }
    const c8 = dsaTopkClusterInstanceFor('index', 4, 8).source();
    expect(c8).toContain('__cluster_dims__(8, 1, 1)');
    expect(c8).toContain('mapa.shared::cluster.u32');
    expect(c8).toContain('ld.shared::cluster.u32');
    expect(c8).toContain('st.shared::cluster.u32');
    const c1 = dsaTopkClusterInstanceFor('pageTable', 1, 1).source();
    for (const cluster of ['__cluster_dims__', 'tk_cluster', 'shared::cluster']) expect(c1).not.toContain(cluster);
    expect(c1).toContain('block_table[');
    expect(() => dsaTopkClusterInstanceFor('index', 4, 16)).toThrow(DsaArgumentError);
  });

  it('rejects a cluster policy outside the rules, launches past the grid and row strides past the instance', () => {
    const policy = { cluster: 8, threads: 512, vector: 4, unroll: 8, output: dsaTopkIndexOutput } as const;
    expect(() => new DsaTopkClusterInstance({ ...policy, cluster: 16 })).toThrow(/policy.cluster/);
    expect(() => new DsaTopkClusterInstance({ ...policy, threads: 256 })).toThrow(/policy.threads/);
    expect(() => new DsaTopkClusterInstance({ ...policy, vector: 2 as 4 })).toThrow(/policy.vector/);
    expect(() => new DsaTopkClusterInstance({ ...policy, unroll: 16 })).toThrow(/policy.unroll/);
    expect(() => new DsaTopkClusterInstance({ ...policy, output: { ...dsaTopkIndexOutput, kind: 'x' as 'index' } })).toThrow(
      /policy.output/,
    );
    const i = new DsaTopkClusterInstance(policy);
    expect(errorOf(() => i.launch(2 ** 28)).argument).toBe('rows');
    const args = { logits: 0x1000n, lengths: 0n, out: 0x2000n, row_stride: 131073, k: 2048 };
    expect(() => i.signature.pack(args)).toThrow(ArgumentError);
    expect(() => i.signature.pack({ ...args, row_stride: 131072 })).not.toThrow();
  });

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
