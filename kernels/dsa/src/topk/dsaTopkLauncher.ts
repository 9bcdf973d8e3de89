// The host side of the top-k kernels: checks the problem and the device buffers (naming each),
// picks the catalog instance (long rows in large launches, or where clusters do not serve: the
// two-read single-CTA kernel; other rows up to 131072: the cluster kernel with the cluster size for
// the row length and batch; the rest: the single-CTA kernel; × output form × load width), packs the arguments and launches on a stream.
import { ArgumentError, ArgumentProblems } from '@tilekit/numeric';
import { checkDeviceRange, type DeviceRange } from '@tilekit/runtime';
import { DsaArgumentError } from '../dsaArgumentError.ts';
import type { DsaKernel, DsaPackedLaunch } from '../dsaKernel.ts';
import { DSA_NEXT_N, DSA_PAGE_TOKENS, DSA_TOPK_MAX } from '../dsaShape.ts';
import { dsaTopkClusterInstanceFor, dsaTopkClusterSizeFor, dsaTopkInstanceFor, dsaTopkVectorFor } from './dsaTopkCatalog.ts';
import type { DsaTopkClusterInstance } from './dsaTopkClusterInstance.ts';
import { DSA_TOPK_MAX_ROW_STRIDE, type DsaTopkInstance } from './dsaTopkInstance.ts';
import { dsaTopkPrefersTwoRead, dsaTopkTwoReadInstanceFor } from './dsaTopkTwoReadCatalog.ts';
import type { DsaTopkOutputKind } from './dsaTopkOutput.ts';

/** The page table of the page-table output form. */
export interface DsaTopkPageTableConfig {
  /** Rows per sequence (next_n): 1, or 2 with one multi-token-prediction draft; row r reads the table of sequence ⌊r / rowsPerSequence⌋. */
  readonly rowsPerSequence: number;
  /** Pages per sequence in the block table (≥ ⌈rowStride / 64⌉, so every position has a page). */
  readonly maxPages: number;
}

/** One top-k problem: [rows][rowStride] logits, k kept per row, and the output form. */
export interface DsaTopkConfig {
  /** Rows (queries × next_n) to select for: one CTA or one cluster of CTAs each. */
  readonly rows: number;
  /** Elements between consecutive rows of logits (the longest row; 1 … 2^30). */
  readonly rowStride: number;
  /** Positions kept per row (1 … 4096; may exceed the row: −1 fills the rest). */
  readonly k: number;
  /** Store global cache slots through this page table instead of token indices. */
  readonly pageTable?: DsaTopkPageTableConfig;
}

/** A checked config with its output form. */
export interface CheckedDsaTopkConfig extends DsaTopkConfig {
  readonly output: DsaTopkOutputKind;
}

/**
 * The device buffers of one launch:
 * - logits fp32 [rows][rowStride] (4-byte aligned; 16-byte aligned with rowStride % 4 = 0 takes 16-byte loads);
 * - lengths int32 [rows], optional (absent or null: every row is rowStride long; clamped to [0, rowStride]);
 * - out int32 [rows][k] (written: must not overlap the inputs);
 * - blockTable int32 [rows / rowsPerSequence][maxPages] with the page-table form only.
 */
export interface DsaTopkBuffers {
  readonly logits: DeviceRange;
  readonly lengths?: DeviceRange | null;
  readonly out: DeviceRange;
  readonly blockTable?: DeviceRange;
}

/** A top-k instance of either kernel: one CTA per row, or one cluster per row. */
export type DsaTopkAnyInstance = DsaTopkInstance | DsaTopkClusterInstance;

/** One packed launch (the launch record every DSA launcher packs). */
export type DsaTopkPackedLaunch = DsaPackedLaunch<DsaTopkAnyInstance>;

/** Bytes each buffer of a checked config must hold. */
export type DsaTopkBufferBytes = Readonly<Record<'logits' | 'lengths' | 'out' | 'blockTable', number>>;

function integer(name: string, v: unknown, min: number, max: number): number | undefined {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min || v > max)
    throw new DsaArgumentError(name, `must be an integer in [${min}, ${max}]`, v);
  return v;
}

/** The page-table fields (every problem reported to `v`). */
function checkPageTable(v: ArgumentProblems, p: unknown, rows: number | undefined, rowStride: number | undefined): void {
  if (typeof p !== 'object' || p === null) return v.report('pageTable', 'must be an object { rowsPerSequence, maxPages } when given', p);
  const { rowsPerSequence, maxPages } = p as Record<string, unknown>;
  if (!DSA_NEXT_N.includes(rowsPerSequence as number))
    v.report('pageTable.rowsPerSequence', `must be one of ${DSA_NEXT_N.join(', ')} (next_n)`, rowsPerSequence);
  else if (rows !== undefined && rows % (rowsPerSequence as number) !== 0)
    v.report('pageTable.rowsPerSequence', `must divide rows = ${rows} (rows = sequences × next_n)`, rowsPerSequence);
  const pages = rowStride === undefined ? 1 : Math.ceil(rowStride / DSA_PAGE_TOKENS);
  v.check(() => integer('pageTable.maxPages', maxPages, pages, 2 ** 31 - 1));
}

/**
 * Checks a top-k config: rows in [1, 2^31 − 1], rowStride in [1, 2^30], k in [1, 4096], and with
 * `pageTable`: rowsPerSequence ∈ {1, 2} dividing rows, maxPages ≥ ⌈rowStride / 64⌉ (positions
 * beyond the table's pages would read past it).
 * @throws DsaArgumentError naming the field and the rule, every problem found in one error (the first one's name as `argument`).
 */
export function checkDsaTopkConfig(config: DsaTopkConfig): CheckedDsaTopkConfig {
  if (typeof config !== 'object' || config === null) throw new DsaArgumentError('config', 'must be an object', config);
  const v = new ArgumentProblems(DsaArgumentError);
  const rows = v.check(() => integer('rows', config.rows, 1, 2 ** 31 - 1));
  const rowStride = v.check(() => integer('rowStride', config.rowStride, 1, DSA_TOPK_MAX_ROW_STRIDE));
  v.check(() => integer('k', config.k, 1, DSA_TOPK_MAX));
  if (rows !== undefined && rowStride !== undefined && rows * rowStride * 4 > Number.MAX_SAFE_INTEGER)
    v.report('rows', `× rowStride = ${rowStride} must address fewer than 2^53 bytes of logits`, rows);
  if (config.pageTable !== undefined) checkPageTable(v, config.pageTable, rows, rowStride);
  v.throwIfAny();
  return Object.freeze({ ...config, output: config.pageTable === undefined ? 'index' : 'pageTable' });
}

/** Bytes of each buffer of a checked config (blockTable 0 without the page-table form). */
export function dsaTopkBufferBytes(c: CheckedDsaTopkConfig): DsaTopkBufferBytes {
  const sequences = c.pageTable === undefined ? 0 : c.rows / c.pageTable.rowsPerSequence;
  return {
    logits: c.rows * c.rowStride * 4,
    lengths: c.rows * 4,
    out: c.rows * c.k * 4,
    blockTable: sequences * (c.pageTable?.maxPages ?? 0) * 4,
  };
}

/** Reports `buffers.out` overlapping any input (the kernel reads them while writing out). */
function reportOverlaps(v: ArgumentProblems, buffers: DsaTopkBuffers, bytes: DsaTopkBufferBytes): void {
  const out = buffers.out;
  for (const input of ['logits', 'lengths', 'blockTable'] as const) {
    const other = buffers[input];
    if (other === undefined || other === null || bytes[input] === 0) continue;
    if (out.ptr < other.ptr + BigInt(bytes[input]) && other.ptr < out.ptr + BigInt(bytes.out))
      v.report('buffers.out', `must not overlap buffers.${input} (the kernel reads it while writing out)`, {
        out: `0x${out.ptr.toString(16)}`,
        [input]: `0x${other.ptr.toString(16)}`,
      });
  }
}

/** Checks every buffer's presence, size and alignment (each problem reported to `v`). */
function checkBuffers(v: ArgumentProblems, c: CheckedDsaTopkConfig, buffers: DsaTopkBuffers, bytes: DsaTopkBufferBytes): void {
  v.check(() => checkDeviceRange('buffers.logits', buffers.logits, bytes.logits, 4));
  v.check(() => checkDeviceRange('buffers.out', buffers.out, bytes.out, 4));
  if (buffers.lengths !== undefined && buffers.lengths !== null)
    v.check(() => checkDeviceRange('buffers.lengths', buffers.lengths!, bytes.lengths, 4));
  if (c.output === 'pageTable') v.check(() => checkDeviceRange('buffers.blockTable', buffers.blockTable, bytes.blockTable, 4));
  else if (buffers.blockTable !== undefined)
    v.report('buffers.blockTable', 'is read only with the page-table form (config.pageTable); leave it out', buffers.blockTable);
}

/**
 * The catalog instance a launch of `c` takes with logits at `logitsPtr`: the two-read instance
 * where dsaTopkPrefersTwoRead(c) holds; else the cluster kernel with dsaTopkClusterSizeFor(rows,
 * rowStride) CTAs per row, or, where that is undefined (rowStride > 131072, or a launch of clusters
 * past DSA_TOPK_CLUSTER_MAX_CTAS CTAs), the single-CTA kernel; the output form of `c` and the
 * widest loads the logits allow (dsaTopkVectorFor).
 */
export function dsaTopkInstanceForLaunch(c: CheckedDsaTopkConfig, logitsPtr: bigint): DsaTopkAnyInstance {
  const vector = dsaTopkVectorFor(c.rowStride, logitsPtr);
  if (dsaTopkPrefersTwoRead(c)) return dsaTopkTwoReadInstanceFor(c.output, vector);
  const cluster = dsaTopkClusterSizeFor(c.rows, c.rowStride);
  return cluster === undefined ? dsaTopkInstanceFor(c.output, vector) : dsaTopkClusterInstanceFor(c.output, vector, cluster);
}

/**
 * Checks the buffers against a checked config (each present, at least its size, 4-byte aligned;
 * blockTable exactly when the page-table form is asked for) and packs the launch of the catalog
 * instance dsaTopkInstanceForLaunch picks.
 * @throws ArgumentError naming the buffer (`buffers.logits`, …) and the rule, every broken buffer in
 * one error; then one naming `buffers.out` when it overlaps an input.
 */
export function packDsaTopk(c: CheckedDsaTopkConfig, buffers: DsaTopkBuffers): DsaTopkPackedLaunch {
  if (typeof buffers !== 'object' || buffers === null) throw new ArgumentError('buffers', 'must be an object of device buffers', buffers);
  const bytes = dsaTopkBufferBytes(c);
  const v = new ArgumentProblems(ArgumentError);
  checkBuffers(v, c, buffers, bytes);
  v.throwIfAny();
  reportOverlaps(v, buffers, bytes);
  v.throwIfAny();
  const instance = dsaTopkInstanceForLaunch(c, buffers.logits.ptr);
  const own = {
    logits: buffers.logits.ptr,
    lengths: buffers.lengths?.ptr ?? 0n,
    out: buffers.out.ptr,
    row_stride: c.rowStride,
    k: c.k,
  };
  const page =
    c.pageTable === undefined
      ? {}
      : { block_table: buffers.blockTable!.ptr, max_pages: c.pageTable.maxPages, rows_per_sequence: c.pageTable.rowsPerSequence };
  const l = instance.launch(c.rows);
  return { instance, grid: l.grid, block: l.block, sharedBytes: l.sharedBytes, args: instance.signature.pack({ ...own, ...page }) };
}

/** One top-k instance of either kernel compiled and loaded (the shared {@link DsaKernel}). */
export type DsaTopkKernel = DsaKernel<DsaTopkAnyInstance>;
