// Logical token positions of a sequence → cache slots, through its block table.
import { DsaArgumentError } from '../dsaArgumentError.ts';
import { DSA_PAGE_TOKENS } from '../dsaShape.ts';
import { dsaCheckCount } from './dsaCheckLength.ts';

/**
 * The cache slot of logical position `position` of sequence `sequence`:
 * `blockTable[sequence·maxPages + (position >> 6)] · 64 + (position & 63)`.
 * @throws DsaArgumentError (naming `argument`) when position >> 6 ≥ maxPages or the table entry is negative,
 * or when `sequence` has no row in the table.
 */
export function dsaSlotOfPosition(
  blockTable: Int32Array,
  maxPages: number,
  sequence: number,
  position: number,
  argument = 'position',
): number {
  if (!Number.isSafeInteger(position) || position < 0 || position >= maxPages * DSA_PAGE_TOKENS) {
    throw new DsaArgumentError(argument, `must be a position in [0, maxPages·64 = ${maxPages * DSA_PAGE_TOKENS})`, position);
  }
  const row = sequence * maxPages;
  if (!Number.isSafeInteger(sequence) || sequence < 0 || row + maxPages > blockTable.length) {
    throw new DsaArgumentError('sequence', `must have a row in blockTable (${blockTable.length / maxPages} rows)`, sequence);
  }
  const pageIndex = Math.floor(position / DSA_PAGE_TOKENS);
  const page = blockTable[row + pageIndex]!;
  if (page < 0) throw new DsaArgumentError(`blockTable[${row + pageIndex}]`, `must be a page (≥ 0): ${argument} maps to it`, page);
  return page * DSA_PAGE_TOKENS + (position % DSA_PAGE_TOKENS);
}

/**
 * The cache slots of `positions` of sequence `sequence` ([batch][maxPages] block table): each is
 * {@link dsaSlotOfPosition}; a position of −1 gives slot −1 (skipped by the cache writer).
 * @throws DsaArgumentError for a bad maxPages, a table length that is not a multiple of it, or a bad position.
 */
export function dsaSlotsFromBlockTable(
  blockTable: Int32Array,
  maxPages: number,
  sequence: number,
  positions: Int32Array | readonly number[],
): Int32Array {
  dsaCheckCount('maxPages', maxPages);
  if (blockTable.length % maxPages !== 0)
    throw new DsaArgumentError('blockTable', `must hold whole rows of maxPages = ${maxPages}`, blockTable.length);
  return Int32Array.from(positions, (position, i) =>
    position === -1 ? -1 : dsaSlotOfPosition(blockTable, maxPages, sequence, position, `positions[${i}]`),
  );
}
