// Selected logical positions → cache slots (FlashMLA's sparse decode indices: page · 64 + offset).
import { DsaArgumentError } from '../dsaArgumentError.ts';
import { dsaCheckCount, dsaCheckLength } from './dsaCheckLength.ts';
import { dsaSlotOfPosition } from './dsaSlotsFromBlockTable.ts';

/**
 * The cache slots of top-k selections: `indices` is [rows][k] logical positions (−1 = no selection), row r
 * belonging to sequence b = ⌊r / rowsPerSequence⌋ (rowsPerSequence = nextN for decode); each position p becomes
 * blockTable[b·maxPages + (p >> 6)]·64 + (p & 63), and −1 stays −1. The result is [rows][k] int32, what the
 * sparse attention reads (FlashMLA's decode indices; FlashInfer's fused top-k + page-table transform).
 * @throws DsaArgumentError for bad sizes or lengths, an index below −1, a position past maxPages·64, or a
 * negative table entry under a selected position.
 */
export function dsaTopkToPageTable(
  indices: Int32Array,
  rows: number,
  k: number,
  blockTable: Int32Array,
  maxPages: number,
  rowsPerSequence: number,
): Int32Array {
  dsaCheckCount('rows', rows, 0);
  dsaCheckCount('k', k);
  dsaCheckCount('maxPages', maxPages);
  dsaCheckCount('rowsPerSequence', rowsPerSequence);
  dsaCheckLength('indices', indices, rows * k, 'rows·k');
  const sequences = Math.ceil(rows / rowsPerSequence);
  if (blockTable.length < sequences * maxPages) {
    throw new DsaArgumentError(
      'blockTable',
      `must hold ⌈rows / rowsPerSequence⌉·maxPages = ${sequences * maxPages} entries at least`,
      blockTable.length,
    );
  }
  return indices.map((position, i) => {
    if (position === -1) return -1;
    return dsaSlotOfPosition(blockTable, maxPages, Math.floor(Math.floor(i / k) / rowsPerSequence), position, `indices[${i}]`);
  });
}
