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
import { DSA_TOPK_LOGIT_STYLES, type DsaTopkLogitOptions } from './dsaTopkLogits.ts';

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

function edgeCases(): DsaTopkGpuCase[] {
  const c = (label: string, o: Omit<DsaTopkLogitOptions, 'seed'>, extra: Partial<DsaTopkGpuCase> = {}): DsaTopkGpuCase => ({
    label,
    logits: { seed: 20_000 + label.length, ...o },
    ...extra,
  });
  return [
    c('all-equal rows of 128K, k 2048 (every pass narrows; CTA 0 of the cluster keeps all)', {
      rows: 2,
      rowStride: 131072,
      k: 2048,
      style: 'allEqual',
    }),
    c('all-equal rows of 20000, k 4096, lengths', { rows: 3, rowStride: 20000, k: 4096, style: 'allEqual', lengths: [20000, 4095, 4097] }),
    c('narrow values (8 top bins), 64K, k 2048: deep passes', { rows: 2, rowStride: 65536, k: 2048, style: 'narrow' }),
    c('narrow values, 128K, k 7', { rows: 1, rowStride: 131072, k: 7, style: 'narrow' }),
    c('few distinct values (ties), 32K, k 2048', { rows: 3, rowStride: 32768, k: 2048, style: 'ties' }),
    c('rowStride 1, k 1', { rows: 4, rowStride: 1, k: 1, style: 'normal' }),
    c('rowStride 1, k 4096', { rows: 2, rowStride: 1, k: 4096, style: 'masked' }),
    c('k 4096 > rowStride 100', { rows: 3, rowStride: 100, k: 4096, style: 'normal' }),
    c('lengths 0, 1, past the row, negative, 63, 65, 129', {
      rows: 7,
      rowStride: 300,
      k: 7,
      style: 'normal',
      lengths: [0, 1, 305, -3, 63, 65, 129],
    }),
    c('−∞ runs, NaN, ±0, +∞, 8K, k 2048', { rows: 4, rowStride: 8192, k: 2048, style: 'masked' }),
    c('−∞ runs, NaN, random lengths, 128K, k 2048', { rows: 3, rowStride: 131072, k: 2048, style: 'masked', lengths: 'random' }),
    c('spread exponents, 32K, k 4096', { rows: 2, rowStride: 32768, k: 4096, style: 'spread' }),
    c('misaligned logits (scalar loads), 8K, k 2048', { rows: 3, rowStride: 8192, k: 2048, style: 'normal' }, { logitsOffset: 4 }),
    c(
      'page table, next_n 2, 128K, k 2048, random lengths',
      { rows: 6, rowStride: 131072, k: 2048, style: 'normal', lengths: 'random' },
      { rowsPerSequence: 2 },
    ),
    c(
      'page table, next_n 1, lengths not multiples of 64, k 7',
      { rows: 4, rowStride: 1000, k: 7, style: 'ties', lengths: [1000, 999, 65, 1] },
      { rowsPerSequence: 1 },
    ),
    c('page table, next_n 2, k 4096 > rows of 3000', { rows: 4, rowStride: 3000, k: 4096, style: 'masked' }, { rowsPerSequence: 2 }),
    ...clusterCases(),
  ];
}

/** The cluster kernel's boundaries (the cluster size each takes is in its label: dsaTopkClusterSizeFor). */
export function clusterCases(): DsaTopkGpuCase[] {
  const c = (label: string, o: Omit<DsaTopkLogitOptions, 'seed'>, extra: Partial<DsaTopkGpuCase> = {}): DsaTopkGpuCase => ({
    label: `cluster: ${label}`,
    logits: { seed: 21_000 + label.length, ...o },
    ...extra,
  });
  return [
    c('L 8191 (1 CTA, scalar loads), k 2048', { rows: 2, rowStride: 8191, k: 2048, style: 'normal' }),
    c('L 8192 (1 CTA), k 2048, ties', { rows: 2, rowStride: 8192, k: 2048, style: 'ties' }),
    c('L 8193 (2 CTAs, scalar loads), k 2048, lengths', {
      rows: 3,
      rowStride: 8193,
      k: 2048,
      style: 'masked',
      lengths: [8193, 8192, 4100],
    }),
    c('L 65536 (8 CTAs of 8192), k 2048', { rows: 1, rowStride: 65536, k: 2048, style: 'spread' }),
    c('L 65536, 40 rows (the batch rule: 4 CTAs of 16384), k 2048', { rows: 40, rowStride: 65536, k: 2048, style: 'normal' }),
    c('L 131072 (8 CTAs of 16384), k 2048', { rows: 2, rowStride: 131072, k: 2048, style: 'normal' }),
    c('L 131072, narrow values, k 4096', { rows: 1, rowStride: 131072, k: 4096, style: 'narrow' }),
    c('L 131073 (past the cluster kernel: one CTA per row), k 2048', { rows: 1, rowStride: 131073, k: 2048, style: 'normal' }),
    c('L 131076 (one CTA per row, 16-byte loads), k 2048, lengths', {
      rows: 2,
      rowStride: 131076,
      k: 2048,
      style: 'masked',
      lengths: [131076, 70000],
    }),
    c('ties straddling CTA slices: L 131072, 8 values, k 4096', { rows: 1, rowStride: 131072, k: 4096, style: 'ties', palette: 8 }),
    c('ties straddling CTA slices: L 32768 (4 CTAs), 3 values, k 4096', { rows: 2, rowStride: 32768, k: 4096, style: 'ties', palette: 3 }),
    c('lengths ending inside a slice: L 100000 (8 CTAs of 12512), k 2048', {
      rows: 5,
      rowStride: 100000,
      k: 2048,
      style: 'masked',
      lengths: [99999, 16385, 12513, 12512, 37],
    }),
    c('k 4096, L 4097 (1 CTA), all equal', { rows: 2, rowStride: 4097, k: 4096, style: 'allEqual' }),
    c('k 4096, L 4100, normal', { rows: 3, rowStride: 4100, k: 4096, style: 'normal' }),
    c('k 4096, L 16400 (4 CTAs of 4112), all equal, lengths just above k', {
      rows: 3,
      rowStride: 16400,
      k: 4096,
      style: 'allEqual',
      lengths: [4097, 8200, 8201],
    }),
    c(
      'page table, next_n 2, L 131072, ties straddling slices, k 4096',
      { rows: 2, rowStride: 131072, k: 4096, style: 'ties', palette: 8, lengths: [131072, 70001] },
      { rowsPerSequence: 2 },
    ),
  ];
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
