// The generated part of README.md: the text between two marker comments, found and replaced as
// text (the rest of the README is written by hand and left as it is).
import { ArgumentError } from '@tilekit/numeric';

export const BENCH_TABLE_BEGIN = '<!-- bench-table:begin -->';
export const BENCH_TABLE_END = '<!-- bench-table:end -->';

/** Where the block lies: the offset just after the begin marker's line and the offset of the end marker. */
function blockRange(readme: string, argument: string): { from: number; to: number } {
  const begin = readme.indexOf(BENCH_TABLE_BEGIN);
  const end = readme.indexOf(BENCH_TABLE_END);
  if (begin < 0 || end < 0) throw new ArgumentError(argument, `must hold the markers ${BENCH_TABLE_BEGIN} and ${BENCH_TABLE_END}`);
  if (readme.indexOf(BENCH_TABLE_BEGIN, begin + 1) >= 0 || readme.indexOf(BENCH_TABLE_END, end + 1) >= 0)
    throw new ArgumentError(argument, 'must hold each bench-table marker once');
  if (end < begin) throw new ArgumentError(argument, `must hold ${BENCH_TABLE_BEGIN} before ${BENCH_TABLE_END}`);
  if (readme[begin + BENCH_TABLE_BEGIN.length] !== '\n') throw new ArgumentError(argument, `must end the line after ${BENCH_TABLE_BEGIN}`);
  return { from: begin + BENCH_TABLE_BEGIN.length + 1, to: end };
}

/** The text between the markers (after the begin marker's line break). Throws ArgumentError naming `argument`. */
export function extractMarkedBlock(readme: string, argument = 'readme'): string {
  const { from, to } = blockRange(readme, argument);
  return readme.slice(from, to);
}

/** `readme` with the text between the markers replaced by `block` (which should end with a line break). */
export function replaceMarkedBlock(readme: string, block: string, argument = 'readme'): string {
  const { from, to } = blockRange(readme, argument);
  return `${readme.slice(0, from)}${block}${readme.slice(to)}`;
}
