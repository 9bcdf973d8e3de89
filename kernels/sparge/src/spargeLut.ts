import { SpargeArgumentError } from './spargeArgumentError.ts';

/** The dimensions of a block map / LUT: [batch][nhead][qBlocks][kBlocks]. */
export interface SpargeBlockGrid {
  readonly batch: number;
  readonly nhead: number;
  readonly qBlocks: number;
  readonly kBlocks: number;
}

/** The one-hot block map: map[((b·nhead + h)·qBlocks + i)·kBlocks + j] = 1 iff query block i attends key block j. */
export interface SpargeBlockMap extends SpargeBlockGrid {
  readonly map: Uint8Array;
}

/**
 * Upstream's LUT (utils.py): per (b, h, query block) the ascending selected key blocks k₀ < k₁ < …,
 * delta-encoded in an int32 row of kBlocks entries, lut[0] = k₀, lut[t] = k_t − k_{t−1}, entries past
 * validBlockNum are 0; validBlockNum [b][h][qBlocks] counts them. A kernel walks the row adding
 * lut[t]·blockK to its K/V pointer.
 */
export interface SpargeLut extends SpargeBlockGrid {
  readonly lut: Int32Array;
  readonly validBlockNum: Int32Array;
}

function checkGrid(where: string, g: SpargeBlockGrid): void {
  for (const key of ['batch', 'nhead', 'qBlocks', 'kBlocks'] as const) {
    const v = g[key];
    if (!Number.isSafeInteger(v) || v < 1) throw new SpargeArgumentError(`${where}.${key}`, 'must be an integer ≥ 1', v);
  }
}

/** The number of (b, h, query block) rows of a grid. */
export function spargeGridRows(g: SpargeBlockGrid): number {
  return g.batch * g.nhead * g.qBlocks;
}

/**
 * Encodes a one-hot block map as upstream's delta LUT with per-row valid counts.
 * Postcondition (property-tested): `decodeSpargeLut` gives the map back; validBlockNum is the row's
 * number of ones; the absolute indices (prefix sums) are strictly ascending.
 * @throws SpargeArgumentError when the map's size or entries (0/1) are wrong.
 */
export function encodeSpargeLut(blockMap: SpargeBlockMap): SpargeLut {
  checkGrid('blockMap', blockMap);
  const { kBlocks, map } = blockMap;
  const rows = spargeGridRows(blockMap);
  if (!(map instanceof Uint8Array) || map.length !== rows * kBlocks)
    throw new SpargeArgumentError(
      'blockMap.map',
      `must be a Uint8Array of batch·nhead·qBlocks·kBlocks = ${rows * kBlocks} entries`,
      map?.length,
    );
  const lut = new Int32Array(rows * kBlocks);
  const validBlockNum = new Int32Array(rows);
  for (let r = 0; r < rows; r++) {
    let n = 0;
    let previous = 0;
    for (let j = 0; j < kBlocks; j++) {
      const bit = map[r * kBlocks + j]!;
      if (bit > 1) throw new SpargeArgumentError(`blockMap.map[${r * kBlocks + j}]`, 'must be 0 or 1', bit);
      if (bit === 0) continue;
      lut[r * kBlocks + n] = j - previous;
      previous = j;
      n++;
    }
    validBlockNum[r] = n;
  }
  return { batch: blockMap.batch, nhead: blockMap.nhead, qBlocks: blockMap.qBlocks, kBlocks, lut, validBlockNum };
}

/**
 * The absolute ascending key-block indices of LUT row r (= (b·nhead + h)·qBlocks + i), checked: the
 * first entry ≥ 0, later deltas ≥ 1, every index < kBlocks, entries past the count 0.
 * @throws SpargeArgumentError naming `lut.lut[…]` or `lut.validBlockNum[r]`.
 */
export function spargeLutRowBlocks(lut: SpargeLut, r: number): number[] {
  const { kBlocks } = lut;
  const n = lut.validBlockNum[r]!;
  if (!Number.isInteger(n) || n < 0 || n > kBlocks)
    throw new SpargeArgumentError(`lut.validBlockNum[${r}]`, `must be in [0, kBlocks = ${kBlocks}]`, n);
  const out: number[] = [];
  let index = 0;
  for (let t = 0; t < kBlocks; t++) {
    const at = r * kBlocks + t;
    const delta = lut.lut[at]!;
    if (t >= n) {
      if (delta !== 0) throw new SpargeArgumentError(`lut.lut[${at}]`, `must be 0 past validBlockNum = ${n}`, delta);
      continue;
    }
    if (t === 0 ? delta < 0 : delta < 1)
      throw new SpargeArgumentError(
        `lut.lut[${at}]`,
        t === 0 ? 'the first block index must be ≥ 0' : 'deltas must be ≥ 1 (blocks strictly ascending)',
        delta,
      );
    index += delta;
    if (index >= kBlocks) throw new SpargeArgumentError(`lut.lut[${at}]`, `reaches block ${index} ≥ kBlocks = ${kBlocks}`, delta);
    out.push(index);
  }
  return out;
}

/**
 * Decodes a delta LUT into the one-hot block map, validating every row (see `spargeLutRowBlocks`).
 * Postcondition (property-tested): inverse of `encodeSpargeLut`.
 * @throws SpargeArgumentError when sizes or entries are inconsistent.
 */
export function decodeSpargeLut(lut: SpargeLut): SpargeBlockMap {
  checkGrid('lut', lut);
  const rows = spargeGridRows(lut);
  if (!(lut.lut instanceof Int32Array) || lut.lut.length !== rows * lut.kBlocks)
    throw new SpargeArgumentError('lut.lut', `must be an Int32Array of ${rows * lut.kBlocks} entries`, lut.lut?.length);
  if (!(lut.validBlockNum instanceof Int32Array) || lut.validBlockNum.length !== rows)
    throw new SpargeArgumentError('lut.validBlockNum', `must be an Int32Array of ${rows} entries`, lut.validBlockNum?.length);
  const map = new Uint8Array(rows * lut.kBlocks);
  for (let r = 0; r < rows; r++) for (const j of spargeLutRowBlocks(lut, r)) map[r * lut.kBlocks + j] = 1;
  return { batch: lut.batch, nhead: lut.nhead, qBlocks: lut.qBlocks, kBlocks: lut.kBlocks, map };
}
