import { cast } from '@tilekit/codegen';
import type { DistributedTensor } from './distributedTensor.ts';
import { ShuffleTileError } from './errors.ts';
import type { TileDistributionEncoding } from './tileDistributionEncoding.ts';
import type { ThreadScope } from './blockEmitter.ts';

const refKey = (r: { major: number; minor: number }): string => `${r.major}:${r.minor}`;

/**
 * The in-thread permutation behind CK's `shuffle_tile`: `perm[dOut] = dIn`, the input register
 * that holds the same tile element as output register dOut. Defined only when the two encodings
 * differ in nothing but the order of their Y dims (same R, H and P lists, same Y digits); anything
 * else would need data from other threads, so it throws `ShuffleTileError` (CK silently does
 * nothing there). Postcondition (property-tested): a permutation of [0, threadBufferSize), and for
 * every thread, input and output registers mapped to each other hold the same X index.
 */
export function shufflePermutation(input: TileDistributionEncoding, output: TileDistributionEncoding): number[] {
  const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);
  if (!same(input.rsLengths, output.rsLengths) || !same(input.hsLengthss, output.hsLengthss)) {
    throw new ShuffleTileError('R and H lengths must be equal', `${input} and ${output}`);
  }
  if (!same(input.psToRhs, output.psToRhs))
    throw new ShuffleTileError('P → RH maps must be equal (only the Y order may differ)', `${input} and ${output}`);
  const inY = new Map(input.ysToRhs.map((r, y) => [refKey(r), y]));
  if (input.ndimY !== output.ndimY || output.ysToRhs.some((r) => !inY.has(refKey(r)))) {
    throw new ShuffleTileError('both must have Y dims over the same H digits', `${input} and ${output}`);
  }
  const perm: number[] = [];
  for (let d = 0; d < output.threadBufferSize; d++) {
    const yo = output.calculateYIndex(d);
    const yi = new Array<number>(input.ndimY).fill(0);
    output.ysToRhs.forEach((r, y) => (yi[inY.get(refKey(r))!] = yo[y]!));
    perm.push(input.calculateD(yi));
  }
  return perm;
}

/**
 * CK's `shuffle_tile(out, in)`: `out` gets `in`'s elements (converted to its type) in its own
 * register order; see {@link shufflePermutation} for when that is possible.
 */
export function shuffleTile(t: ThreadScope, out: DistributedTensor, input: DistributedTensor): void {
  if (out.registers === input.registers) throw new ShuffleTileError('out and in must be different register tiles', out.registers.name);
  const perm = shufflePermutation(input.encoding, out.encoding);
  perm.forEach((dIn, dOut) => t.b.assign(out.at(t, dOut), cast(input.at(t, dIn), out.type)));
}
