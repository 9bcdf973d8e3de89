// The ordering the GPU selection sorts by, modelled in TS: a 64-bit key per candidate whose
// unsigned ascending order is (pooled score descending, key block ascending) — spargeSelectRow's
// tie rule — and the bitonic network over row segments of a power-of-two length, written with the
// same index arithmetic the kernel emits so the model's tests speak for the kernel.
import { SpargeArgumentError } from '../spargeArgumentError.ts';

/** Key blocks per row the selection kernel sorts at most (blockK 64 covers 256k keys); larger rows throw. */
export const SPARGE_SELECT_MAX_KEY_BLOCKS = 4096;

/** The key of a slot that is no candidate (a fix or causally masked key block, or padding): sorts last. */
export const SPARGE_SELECT_NO_CANDIDATE = 0xffff_ffff_ffff_ffffn;

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/**
 * The sort key of key block `index` with fp32 pooled score `score`: high word = the bitwise NOT of
 * the score's order-preserving unsigned image (so larger scores come first), low word = the index
 * (so equal scores keep the lower block first). −0 is folded to +0 first: the CPU compares scores
 * numerically, where −0 = +0 is a tie. Postcondition (property-tested): for fp32 scores a, b and
 * indices i ≠ j, key(a, i) < key(b, j) ⇔ a > b ∨ (a = b ∧ i < j).
 * @throws SpargeArgumentError for a NaN score or an index outside [0, 2³²−1).
 */
export function spargeSelectSortKey(score: number, index: number): bigint {
  if (Number.isNaN(score)) throw new SpargeArgumentError('score', 'must not be NaN', score);
  if (!Number.isSafeInteger(index) || index < 0 || index >= 0xffff_ffff)
    throw new SpargeArgumentError('index', 'must be an integer in [0, 2^32 - 1)', index);
  f32[0] = score === 0 ? 0 : score;
  const bits = u32[0]!;
  const ordered = bits >= 0x8000_0000 ? ~bits >>> 0 : (bits | 0x8000_0000) >>> 0;
  const descending = ~ordered >>> 0;
  return (BigInt(descending) << 32n) | BigInt(index);
}

/** The fp32 score and block index a sort key holds (inverse of {@link spargeSelectSortKey}; −0 comes back as +0). */
export function spargeSelectDecodeKey(key: bigint): { readonly score: number; readonly index: number } {
  const ordered = ~Number(key >> 32n) >>> 0;
  const bits = ordered >= 0x8000_0000 ? (ordered & 0x7fff_ffff) >>> 0 : ~ordered >>> 0;
  u32[0] = bits;
  return { score: f32[0]!, index: Number(key & 0xffff_ffffn) };
}

/** The power of two ≥ kBlocks (≥ 1) the kernel sorts a row of kBlocks candidates over. */
export function spargeSelectSortLength(kBlocks: number): number {
  if (!Number.isSafeInteger(kBlocks) || kBlocks < 0 || kBlocks > SPARGE_SELECT_MAX_KEY_BLOCKS) {
    throw new SpargeArgumentError(
      'kBlocks',
      `must be an integer in [0, ${SPARGE_SELECT_MAX_KEY_BLOCKS}] (the selection kernel's sort capacity)`,
      kBlocks,
    );
  }
  let p = 1;
  while (p < kBlocks) p *= 2;
  return p;
}

/**
 * The selection kernel's bitonic network, step for step: `keys` holds `segments` rows of `length`
 * (a power of two) keys each, and every (k, j) stage visits the pairs p ∈ [0, segments·length/2)
 * with lo = ((q & ~(j−1)) << 1) | (q & (j−1)) for q = p mod length/2, comparing lo and lo + j of
 * segment ⌊p / (length/2)⌋ and swapping so that blocks with lo & k = 0 ascend. In place.
 * Postcondition (property-tested): every segment ends ascending (unsigned), a permutation of itself.
 * @throws SpargeArgumentError when length is not a power of two or keys.length ≠ segments·length.
 */
export function spargeSelectBitonicSort(keys: BigUint64Array, length: number): void {
  if (!Number.isSafeInteger(length) || length < 1 || (length & (length - 1)) !== 0)
    throw new SpargeArgumentError('length', 'must be a power of two', length);
  if (keys.length % length !== 0) throw new SpargeArgumentError('keys', `must hold whole segments of ${length} keys`, keys.length);
  const half = length >> 1;
  const pairs = keys.length >> 1;
  for (let k = 2; k <= length; k <<= 1) {
    for (let j = k >> 1; j > 0; j >>= 1) {
      for (let p = 0; p < pairs; p++) {
        const base = Math.floor(p / half) * length;
        const q = p % half;
        const lo = ((q & ~(j - 1)) << 1) | (q & (j - 1));
        const a = keys[base + lo]!;
        const c = keys[base + lo + j]!;
        if (a > c === ((lo & k) === 0)) {
          keys[base + lo] = c;
          keys[base + lo + j] = a;
        }
      }
    }
  }
}
