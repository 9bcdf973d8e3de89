// Sparge's benchmark inputs: iid normal data has no block sparsity, so both sides run on Sparge's
// locality inputs (spargeSyntheticInputs: drawn, then rounded to fp16). The generator is O(s·d) per
// head on the CPU (≈ 2.3 s per head at s 32768, d 128), so ONE (b, h) slice is drawn per sequence
// length and head bh gets it rotated by bh·⌊s/(b·h)⌋ rows.
import { spargeSyntheticInputs } from '@tilekit/kernel-sparge';
import { encodeArray } from '@tilekit/numeric';

/** The seed of the synthetic slice (the same for every sequence length). */
export const SPARGE_INPUT_SEED = 1;

/** The shape of a self-attention input set: q, k, v are each (b, h, s, d). */
export interface SpargeInputShape {
  readonly b: number;
  readonly h: number;
  readonly s: number;
  readonly d: number;
}

/** One (b, h) slice of q, k, v: s·d fp16 bit patterns each. */
export interface SpargeSlice {
  readonly s: number;
  readonly d: number;
  readonly q: Uint16Array;
  readonly k: Uint16Array;
  readonly v: Uint16Array;
}

/** How head bh's rows are made from the one generated slice: rotated by bh·⌊s/(b·h)⌋ rows. */
export function spargeHeadRotation(bh: number, s: number, heads: number): number {
  return (bh * Math.floor(s / heads)) % s;
}

/** Rows of one head made from the slice: `x` (rows·d values) rotated by `rotation` rows (row 0 of the result is row `rotation` of x). */
export function rotateRows<T extends Float32Array | Uint16Array>(x: T, rotation: number, d: number): T {
  const out = new (x.constructor as new (n: number) => T)(x.length);
  const cut = rotation * d;
  out.set(x.subarray(cut) as T, 0);
  out.set(x.subarray(0, cut) as T, x.length - cut);
  return out;
}

/** The record's description of the inputs of a shape (BenchSuiteResult.inputs.generator). */
export function spargeInputsGenerator(c: SpargeInputShape): string {
  return (
    `spargeSyntheticInputs seed ${SPARGE_INPUT_SEED} (defaults: walkStep 0.12, sharpness 8, noise 0.3, keyOffset 1) rounded to fp16, ` +
    `one (b,h) slice of ${c.s}x${c.d}; head bh = slice rotated by bh*floor(s/(b*h)) rows`
  );
}

/** Draws the slice of a sequence length and head dim (fp16 bits). */
export function spargeSlice(s: number, d: number): SpargeSlice {
  const x = spargeSyntheticInputs({ batch: 1, nhead: 1, seqlenQ: s, seqlenK: s, headDim: d }, { seed: SPARGE_INPUT_SEED, roundTo: 'fp16' });
  const bits = (values: Float32Array): Uint16Array => encodeArray('fp16', values) as Uint16Array;
  return { s, d, q: bits(x.q), k: bits(x.k), v: bits(x.v) };
}

/** Head bh of one tensor of the slice (fp16 bits, s·d). */
export function spargeHeadBits(slice: Uint16Array, bh: number, c: SpargeInputShape): Uint16Array {
  return rotateRows(slice, spargeHeadRotation(bh, c.s, c.b * c.h), c.d);
}
