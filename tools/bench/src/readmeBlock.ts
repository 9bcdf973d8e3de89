// The generated parts of README.md: the text between two marker comments, found and replaced as
// text (the rest of the README is written by hand and left as it is).
import { ArgumentError } from '@tilekit/numeric';

/** A generated block's begin and end marker comments. */
export interface ReadmeMarkers {
  readonly begin: string;
  readonly end: string;
}

export const BENCH_TABLE_BEGIN = '<!-- bench-table:begin -->';
export const BENCH_TABLE_END = '<!-- bench-table:end -->';
/** The benchmark tables' block (`npm run bench:readme`). */
export const BENCH_TABLE_MARKERS: ReadmeMarkers = Object.freeze({ begin: BENCH_TABLE_BEGIN, end: BENCH_TABLE_END });

/** Where the block lies: the offset just after the begin marker's line and the offset of the end marker. */
function blockRange(readme: string, argument: string, m: ReadmeMarkers): { from: number; to: number } {
  const begin = readme.indexOf(m.begin);
  const end = readme.indexOf(m.end);
  if (begin < 0 || end < 0) throw new ArgumentError(argument, `must hold the markers ${m.begin} and ${m.end}`);
  if (readme.indexOf(m.begin, begin + 1) >= 0 || readme.indexOf(m.end, end + 1) >= 0)
    throw new ArgumentError(argument, `must hold each of ${m.begin} and ${m.end} once`);
  if (end < begin) throw new ArgumentError(argument, `must hold ${m.begin} before ${m.end}`);
  if (readme[begin + m.begin.length] !== '\n') throw new ArgumentError(argument, `must end the line after ${m.begin}`);
  return { from: begin + m.begin.length + 1, to: end };
}

/** The text between the markers (after the begin marker's line break). Throws ArgumentError naming `argument`. */
export function extractMarkedBlock(readme: string, argument = 'readme', markers: ReadmeMarkers = BENCH_TABLE_MARKERS): string {
  const { from, to } = blockRange(readme, argument, markers);
  return readme.slice(from, to);
}

/** `readme` with the text between the markers replaced by `block` (which should end with a line break). */
export function replaceMarkedBlock(
  readme: string,
  block: string,
  argument = 'readme',
  markers: ReadmeMarkers = BENCH_TABLE_MARKERS,
): string {
  const { from, to } = blockRange(readme, argument, markers);
  return `${readme.slice(0, from)}${block}${readme.slice(to)}`;
}
