import { ArgumentError } from '@tilekit/numeric';

/** Horizontal alignment of a table column. */
export type Align = 'left' | 'right' | 'center';

/** One table cell; null and undefined print as empty, numbers with String(). */
export type Cell = string | number | bigint | boolean | null | undefined;

/** Options of formatTable / formatMarkdownTable. */
export interface TableOptions {
  /**
   * One alignment for every column, or one per column (undefined entries keep the default).
   * Default: right for columns whose non-empty cells are all numbers, left otherwise.
   */
  align?: Align | readonly (Align | undefined)[];
  /** Spaces between plain-text columns (default 2). */
  gap?: number;
}

/**
 * An aligned plain-text table: the header, a rule of dashes, then one line per row; columns are
 * padded to their widest cell and separated by `gap` spaces; trailing spaces are trimmed and
 * there is no final newline. Postcondition (tested): every row has the same number of cells as
 * `columns` (ArgumentError otherwise) and, without trailing trimming, every line has the same width.
 */
export function formatTable(columns: readonly string[], rows: readonly (readonly Cell[])[], options: TableOptions = {}): string {
  const { text, aligns } = prepare(columns, rows, options, 'formatTable', (s) => s);
  const gap = options.gap ?? 2;
  if (!Number.isInteger(gap) || gap < 0) throw new ArgumentError('formatTable', 'gap must be a non-negative integer', gap);
  const widths = columnWidths(text);
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, c) => pad(cell, widths[c]!, aligns[c]!))
      .join(' '.repeat(gap))
      .trimEnd();
  const [header, ...body] = text;
  const rule = widths.map((w) => '-'.repeat(w)).join(' '.repeat(gap));
  return [line(header!), rule, ...body.map(line)].join('\n');
}

/**
 * A GitHub-flavoured Markdown table with the same cells and alignments as formatTable: cells are
 * padded so the source reads as a table too, `|` in a cell is escaped, and the delimiter row
 * carries the alignment (`:---`, `---:`, `:---:`).
 */
export function formatMarkdownTable(columns: readonly string[], rows: readonly (readonly Cell[])[], options: TableOptions = {}): string {
  const { text, aligns } = prepare(columns, rows, options, 'formatMarkdownTable', (s) => s.replaceAll('|', '\\|'));
  const widths = columnWidths(text).map((w) => Math.max(w, 3));
  const line = (cells: readonly string[]) => `| ${cells.map((cell, c) => pad(cell, widths[c]!, aligns[c]!)).join(' | ')} |`;
  const delimiter = widths.map((w, c) => {
    const align = aligns[c]!;
    if (align === 'right') return `${'-'.repeat(w - 1)}:`;
    if (align === 'center') return `:${'-'.repeat(w - 2)}:`;
    return `:${'-'.repeat(w - 1)}`;
  });
  const [header, ...body] = text;
  return [line(header!), `| ${delimiter.join(' | ')} |`, ...body.map(line)].join('\n');
}

function prepare(
  columns: readonly string[],
  rows: readonly (readonly Cell[])[],
  options: TableOptions,
  fn: string,
  escape: (s: string) => string,
): { text: string[][]; aligns: Align[] } {
  if (columns.length === 0) throw new ArgumentError(fn, 'needs at least one column', columns);
  rows.forEach((row, r) => {
    if (row.length !== columns.length) {
      throw new ArgumentError(fn, `row ${r} must have ${columns.length} cells like the columns`, row);
    }
  });
  const { align } = options;
  if (Array.isArray(align) && align.length !== columns.length) {
    throw new ArgumentError(fn, `align must have ${columns.length} entries, one per column`, align);
  }
  const aligns = columns.map((_, c): Align => {
    const given = typeof align === 'string' ? align : (align as readonly (Align | undefined)[] | undefined)?.[c];
    if (given !== undefined) {
      if (given !== 'left' && given !== 'right' && given !== 'center') {
        throw new ArgumentError(fn, 'align entries must be left, right or center', given);
      }
      return given;
    }
    const filled = rows.map((row) => row[c]).filter((cell) => cell !== null && cell !== undefined && cell !== '');
    const numeric = filled.length > 0 && filled.every((cell) => typeof cell === 'number' || typeof cell === 'bigint');
    return numeric ? 'right' : 'left';
  });
  const text = [columns.map((h) => escape(cellText(h))), ...rows.map((row) => row.map((cell) => escape(cellText(cell))))];
  return { text, aligns };
}

function cellText(cell: Cell): string {
  if (cell === null || cell === undefined) return '';
  return String(cell).replace(/\r?\n/g, ' ');
}

/** Display width in code points (good enough for the ASCII and µ/× our reports use). */
function width(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

function columnWidths(text: readonly (readonly string[])[]): number[] {
  const widths = new Array<number>(text[0]!.length).fill(0);
  for (const row of text) row.forEach((cell, c) => (widths[c] = Math.max(widths[c]!, width(cell))));
  return widths;
}

function pad(cell: string, w: number, align: Align): string {
  const room = w - width(cell);
  if (align === 'right') return ' '.repeat(room) + cell;
  if (align === 'center') {
    const left = room >> 1;
    return ' '.repeat(left) + cell + ' '.repeat(room - left);
  }
  return cell + ' '.repeat(room);
}
