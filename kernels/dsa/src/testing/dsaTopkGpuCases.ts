// The cases of the top-k GPU spec: hand-picked edges (all-equal rows, narrow values, rows of one
// position, k past the row, lengths 0/1/negative/past the row, −∞ runs and NaN, misaligned logits,
// the page-table form with next_n 2), the cluster kernel's boundaries (row strides around one CTA's
// slice and the 131072 limit, ties straddling CTA slices, lengths ending inside a slice, k 4096 just
// below the row, the batch rule lowering the cluster size), then seeded random ones.
import { Prng } from '@tilekit/host';
import { DSA_PAGE_TOKENS } from '../dsaShape.ts';
import { DSA_TOPK_CLUSTER_SIZES, DsaTopkClusterInstance } from '../topk/dsaTopkClusterInstance.ts';
import { dsaTopkIndexOutput } from '../topk/dsaTopkIndexOutput.ts';
import type { DsaTopkPageTable } from '../topk/dsaTopkOutput.ts';
import { DSA_TOPK_LOGIT_STYLES, type DsaTopkLogitOptions, type DsaTopkLogitStyle } from './dsaTopkLogits.ts';

/** One GPU case: the rows to draw, the output form, and where the logits start. */
export interface DsaTopkGpuCase {
  readonly label: string;
  readonly logits: DsaTopkLogitOptions;
  /** The page-table form with this next_n (the table is drawn from the case's seed). */
  readonly rowsPerSequence?: 1 | 2;
  /** Bytes the logits start past a 256-byte boundary (4: no 16-byte loads). */
  readonly logitsOffset?: number;
}

const STRIDES = [1, 2, 3, 7, 63, 64, 65, 100, 1000, 2047, 4096, 4097, 8192, 10000, 32768, 65536, 131072];
const KS = [1, 7, 2048, 4096];

/**
 * A case as a table row: label, rows, rowStride, k, style, then the rest of the logits options
 * (lengths, palette) and the case's own fields (rowsPerSequence, logitsOffset).
 */
type CaseRow = readonly [
  label: string,
  rows: number,
  rowStride: number,
  k: number,
  style: DsaTopkLogitStyle,
  more?: Partial<Pick<DsaTopkLogitOptions, 'lengths' | 'palette'> & Pick<DsaTopkGpuCase, 'rowsPerSequence' | 'logitsOffset'>>,
];

/** The cases of a table: each label prefixed, each seed `seedBase` + the label's length (unprefixed). */
function casesOf(table: readonly CaseRow[], seedBase: number, prefix = ''): DsaTopkGpuCase[] {
  return table.map(([label, rows, rowStride, k, style, more = {}]) => {
    const { rowsPerSequence, logitsOffset, ...rest } = more;
    return {
      label: `${prefix}${label}`,
      logits: { seed: seedBase + label.length, rows, rowStride, k, style, ...rest },
      ...(rowsPerSequence === undefined ? {} : { rowsPerSequence }),
      ...(logitsOffset === undefined ? {} : { logitsOffset }),
    };
  });
}

const EDGE_CASES: readonly CaseRow[] = [
  ['all-equal rows of 128K, k 2048 (every pass narrows; CTA 0 of the cluster keeps all)', 2, 131072, 2048, 'allEqual'],
  ['all-equal rows of 20000, k 4096, lengths', 3, 20000, 4096, 'allEqual', { lengths: [20000, 4095, 4097] }],
  ['narrow values (8 top bins), 64K, k 2048: deep passes', 2, 65536, 2048, 'narrow'],
  ['narrow values, 128K, k 7', 1, 131072, 7, 'narrow'],
  ['few distinct values (ties), 32K, k 2048', 3, 32768, 2048, 'ties'],
  ['rowStride 1, k 1', 4, 1, 1, 'normal'],
  ['rowStride 1, k 4096', 2, 1, 4096, 'masked'],
  ['k 4096 > rowStride 100', 3, 100, 4096, 'normal'],
  ['lengths 0, 1, past the row, negative, 63, 65, 129', 7, 300, 7, 'normal', { lengths: [0, 1, 305, -3, 63, 65, 129] }],
  ['−∞ runs, NaN, ±0, +∞, 8K, k 2048', 4, 8192, 2048, 'masked'],
  ['−∞ runs, NaN, random lengths, 128K, k 2048', 3, 131072, 2048, 'masked', { lengths: 'random' }],
  ['spread exponents, 32K, k 4096', 2, 32768, 4096, 'spread'],
  ['misaligned logits (scalar loads), 8K, k 2048', 3, 8192, 2048, 'normal', { logitsOffset: 4 }],
  ['page table, next_n 2, 128K, k 2048, random lengths', 6, 131072, 2048, 'normal', { lengths: 'random', rowsPerSequence: 2 }],
  ['page table, next_n 1, lengths not multiples of 64, k 7', 4, 1000, 7, 'ties', { lengths: [1000, 999, 65, 1], rowsPerSequence: 1 }],
  ['page table, next_n 2, k 4096 > rows of 3000', 4, 3000, 4096, 'masked', { rowsPerSequence: 2 }],
];

const CLUSTER_CASES: readonly CaseRow[] = [
  ['L 8191 (1 CTA, scalar loads), k 2048', 2, 8191, 2048, 'normal'],
  ['L 8192 (1 CTA), k 2048, ties', 2, 8192, 2048, 'ties'],
  ['L 8193 (2 CTAs, scalar loads), k 2048, lengths', 3, 8193, 2048, 'masked', { lengths: [8193, 8192, 4100] }],
  ['L 65536 (8 CTAs of 8192), k 2048', 1, 65536, 2048, 'spread'],
  ['L 65536, 40 rows (the batch rule: 4 CTAs of 16384), k 2048', 40, 65536, 2048, 'normal'],
  ['L 131072 (8 CTAs of 16384), k 2048', 2, 131072, 2048, 'normal'],
  ['L 131072, narrow values, k 4096', 1, 131072, 4096, 'narrow'],
  ['L 131073 (past the cluster kernel: one CTA per row), k 2048', 1, 131073, 2048, 'normal'],
  ['L 131076 (one CTA per row, 16-byte loads), k 2048, lengths', 2, 131076, 2048, 'masked', { lengths: [131076, 70000] }],
  ['ties straddling CTA slices: L 131072, 8 values, k 4096', 1, 131072, 4096, 'ties', { palette: 8 }],
  ['ties straddling CTA slices: L 32768 (4 CTAs), 3 values, k 4096', 2, 32768, 4096, 'ties', { palette: 3 }],
  [
    'lengths ending inside a slice: L 100000 (8 CTAs of 12512), k 2048',
    5,
    100000,
    2048,
    'masked',
    { lengths: [99999, 16385, 12513, 12512, 37] },
  ],
  ['k 4096, L 4097 (1 CTA), all equal', 2, 4097, 4096, 'allEqual'],
  ['k 4096, L 4100, normal', 3, 4100, 4096, 'normal'],
  ['k 4096, L 16400 (4 CTAs of 4112), all equal, lengths just above k', 3, 16400, 4096, 'allEqual', { lengths: [4097, 8200, 8201] }],
  [
    'page table, next_n 2, L 131072, ties straddling slices, k 4096',
    2,
    131072,
    4096,
    'ties',
    { palette: 8, lengths: [131072, 70001], rowsPerSequence: 2 },
  ],
];

function edgeCases(): DsaTopkGpuCase[] {
  return [...casesOf(EDGE_CASES, 20_000), ...clusterCases()];
}

/** The cluster kernel's boundaries (the cluster size each takes is in its label: dsaTopkClusterSizeFor). */
export function clusterCases(): DsaTopkGpuCase[] {
  return casesOf(CLUSTER_CASES, 21_000, 'cluster: ');
}

function randomCase(seed: number): DsaTopkGpuCase {
  const rng = new Prng(seed);
  const rowStride = rng.nextFloat() < 0.6 ? STRIDES[rng.nextInt(0, STRIDES.length - 1)]! : Math.round(2 ** rng.nextRange(0, 17));
  const k = rng.nextFloat() < 0.7 ? KS[rng.nextInt(0, KS.length - 1)]! : rng.nextInt(1, 4096);
  const rows = rowStride > 32768 ? rng.nextInt(1, 2) : rng.nextInt(1, 6);
  const style = DSA_TOPK_LOGIT_STYLES[rng.nextInt(0, DSA_TOPK_LOGIT_STYLES.length - 1)]!;
  const lengths = rng.nextFloat() < 0.5 ? 'random' : 'none';
  const paged = rng.nextFloat() < 0.25;
  const rowsPerSequence = rng.nextFloat() < 0.5 ? 1 : 2;
  const offset = rng.nextFloat() < 0.15 ? 4 : 0;
  const r = paged ? rows * rowsPerSequence : rows;
  const notes = [lengths === 'random' ? 'lengths' : '', paged ? `page table next_n ${rowsPerSequence}` : '', offset ? 'misaligned' : ''];
  return {
    label: [`random #${seed}: ${r}×${rowStride} k ${k} ${style}`, ...notes.filter((n) => n !== '')].join(' '),
    logits: { seed, rows: r, rowStride, k, style, lengths },
    ...(paged ? { rowsPerSequence } : {}),
    ...(offset ? { logitsOffset: offset } : {}),
  };
}

/** The spec's cases: the edges, then `random` seeded random ones. */
export function dsaTopkGpuCases(random = 110): DsaTopkGpuCase[] {
  return [...edgeCases(), ...Array.from({ length: random }, (_, i) => randomCase(7_000 + i))];
}

/** A seeded page table for a case: ⌈rowStride / 64⌉ + 3 pages per sequence, each a random page id below 2^20. */
export function dsaTopkGpuPageTable(c: DsaTopkGpuCase): DsaTopkPageTable {
  const rps = c.rowsPerSequence ?? 1;
  const maxPages = Math.ceil(c.logits.rowStride / DSA_PAGE_TOKENS) + 3;
  const rng = new Prng(c.logits.seed + 1);
  const blockTable = Int32Array.from({ length: (c.logits.rows / rps) * maxPages }, () => rng.nextInt(0, 2 ** 20 - 1));
  return { blockTable, maxPages, rowsPerSequence: rps };
}

/** Labels of the cases the GPU spec also runs with every cluster size whose slices hold the row (bypassing the batch rule). */
export const DSA_TOPK_EVERY_CLUSTER_CASES: readonly string[] = Object.freeze([
  'cluster: L 8193 (2 CTAs, scalar loads), k 2048, lengths',
  'cluster: ties straddling CTA slices: L 32768 (4 CTAs), 3 values, k 4096',
  'cluster: k 4096, L 4100, normal',
  'cluster: k 4096, L 16400 (4 CTAs of 4112), all equal, lengths just above k',
  'page table, next_n 1, lengths not multiples of 64, k 7',
  'rowStride 1, k 4096',
  'lengths 0, 1, past the row, negative, 63, 65, 129',
]);

/**
 * What the GPU spec times besides the dispatched instance and the single-CTA kernel: the cluster
 * kernel with 1024 threads of 16 keys (the same 16384-position slices; index form, 16-byte loads),
 * each cluster size.
 */
export function dsaTopkTimingAlternatives(): DsaTopkClusterInstance[] {
  return DSA_TOPK_CLUSTER_SIZES.map(
    (cluster) => new DsaTopkClusterInstance({ cluster, threads: 1024, vector: 4, unroll: 4, output: dsaTopkIndexOutput }),
  );
}
