import { cast } from '@tilekit/codegen';
import { makeDistributedTensor, type DistributedTensor } from './distributedTensor.ts';
import { TileEmitError } from './errors.ts';
import { sliceEncoding } from './sliceEncoding.ts';
import type { TileDistributionEncoding } from './tileDistributionEncoding.ts';
import type { BlockEmitter, ThreadScope } from './blockEmitter.ts';

/**
 * The register map of CK's `get_slice_tile(tensor, xBegins, xEnds)`: the sub-tile's encoding and,
 * per sub-tile register d, the register of the full tile holding the same element (the Y sub-box
 * of `sliceEncoding`). Postcondition (tested): X_sub(P, d) + xBegins = X_full(P, map[d]).
 */
export function sliceTileMap(
  encoding: TileDistributionEncoding,
  xBegins: readonly number[],
  xEnds: readonly number[],
): { readonly encoding: TileDistributionEncoding; readonly map: readonly number[] } {
  const s = sliceEncoding(encoding, xBegins, xEnds);
  const map: number[] = [];
  for (let d = 0; d < s.encoding.threadBufferSize; d++) {
    const y = s.encoding.calculateYIndex(d);
    map.push(encoding.calculateD(y.map((v, i) => v + s.yOrigins[i]!)));
  }
  return { encoding: s.encoding, map };
}

/** Declares a register tile for the slice [xBegins, xEnds) of `input` (the sliced distribution). */
export function makeSliceTile(
  block: BlockEmitter,
  name: string,
  input: DistributedTensor,
  xBegins: readonly number[],
  xEnds: readonly number[],
): DistributedTensor {
  return makeDistributedTensor(block, name, sliceTileMap(input.encoding, xBegins, xEnds).encoding, input.type);
}

function checkSlice(
  what: string,
  full: DistributedTensor,
  part: DistributedTensor,
  xBegins: readonly number[],
  xEnds: readonly number[],
): readonly number[] {
  const { encoding, map } = sliceTileMap(full.encoding, xBegins, xEnds);
  if (!encoding.equals(part.encoding))
    throw new TileEmitError(what, `the slice tile must have the sliced distribution ${encoding}`, String(part.encoding));
  return map;
}

/** CK's `get_slice_tile` on a register tile: `out` = the sub-tile [xBegins, xEnds) of `input`. */
export function getSliceTile(
  t: ThreadScope,
  out: DistributedTensor,
  input: DistributedTensor,
  xBegins: readonly number[],
  xEnds: readonly number[],
): void {
  checkSlice('getSliceTile', input, out, xBegins, xEnds).forEach((dFull, d) =>
    t.b.assign(out.at(t, d), cast(input.at(t, dFull), out.type)),
  );
}

/** CK's `set_slice_tile`: writes `part` into the sub-tile [xBegins, xEnds) of `dst`. */
export function setSliceTile(
  t: ThreadScope,
  dst: DistributedTensor,
  part: DistributedTensor,
  xBegins: readonly number[],
  xEnds: readonly number[],
): void {
  checkSlice('setSliceTile', dst, part, xBegins, xEnds).forEach((dFull, d) => t.b.assign(dst.at(t, dFull), cast(part.at(t, d), dst.type)));
}
