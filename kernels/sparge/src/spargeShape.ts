import { ArgumentProblems } from '@tilekit/numeric';
import { SpargeArgumentError } from './spargeArgumentError.ts';

/** Head dims Sparge supports (upstream asserts D ∈ {64, 128}). */
export const SPARGE_HEAD_DIMS = [64, 128] as const;

/**
 * The problem shape of the CPU references. Q is [batch][nhead][seqlenQ][headDim] and K, V are
 * [batch][nheadK][seqlenK][headDim], packed (bhsd), as decoded numbers. Query head h reads key/value
 * head ⌊h / (nhead / nheadK)⌋ (GQA; upstream's block map needs nheadK = nhead, ours pools the K head
 * each query head reads). V has the head dim of Q and K (as upstream).
 */
export interface SpargeShape {
  readonly batch: number;
  readonly nhead: number;
  /** Default nhead; must divide it. */
  readonly nheadK?: number;
  readonly seqlenQ: number;
  readonly seqlenK: number;
  readonly headDim: number;
}

/** The shape with `nheadK` filled in. */
export type ResolvedSpargeShape = Required<SpargeShape>;

/** Decoded tensor values of the references (packed bhsd). */
export type SpargeValues = Float32Array | Float64Array;

function positive(where: string, v: unknown, min: number): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min) throw new SpargeArgumentError(where, `must be an integer ≥ ${min}`, v);
  return v;
}

/**
 * Checks a shape: batch, heads and lengths are integers ≥ 1, nheadK divides nhead, headDim ∈ {64, 128}
 * (or any integer ≥ 1 with `anyHeadDim`, for small-shape tests of the pure math).
 * @throws SpargeArgumentError naming `shape.<field>`, every problem found in one error (the first one's name as `argument`).
 */
export function resolveSpargeShape(shape: SpargeShape, options: { readonly anyHeadDim?: boolean } = {}): ResolvedSpargeShape {
  if (typeof shape !== 'object' || shape === null)
    throw new SpargeArgumentError('shape', 'must be an object { batch, nhead, seqlenQ, seqlenK, headDim }', shape);
  const v = new ArgumentProblems(SpargeArgumentError);
  const batch = v.check(() => positive('shape.batch', shape.batch, 1));
  const nhead = v.check(() => positive('shape.nhead', shape.nhead, 1));
  const nheadK = shape.nheadK === undefined ? nhead : v.check(() => positive('shape.nheadK', shape.nheadK, 1));
  if (nhead !== undefined && nheadK !== undefined && nhead % nheadK !== 0) v.report('shape.nheadK', `must divide nhead = ${nhead}`, nheadK);
  const seqlenQ = v.check(() => positive('shape.seqlenQ', shape.seqlenQ, 1));
  const seqlenK = v.check(() => positive('shape.seqlenK', shape.seqlenK, 1));
  const headDim = v.check(() => positive('shape.headDim', shape.headDim, 1));
  if (headDim !== undefined && options.anyHeadDim !== true && !(SPARGE_HEAD_DIMS as readonly number[]).includes(headDim)) {
    v.report('shape.headDim', `must be one of ${SPARGE_HEAD_DIMS.join(', ')} (upstream's supported head dims)`, headDim);
  }
  v.throwIfAny();
  return Object.freeze({ batch: batch!, nhead: nhead!, nheadK: nheadK!, seqlenQ: seqlenQ!, seqlenK: seqlenK!, headDim: headDim! });
}

/**
 * Checks that `values` is a Float32Array/Float64Array of exactly `rows`·headDim elements per (batch,
 * head): batch·heads·rows·headDim in all.
 * @throws SpargeArgumentError naming `where`.
 */
export function checkSpargeValues(
  where: string,
  values: unknown,
  batch: number,
  heads: number,
  rows: number,
  headDim: number,
): SpargeValues {
  if (!(values instanceof Float32Array || values instanceof Float64Array)) {
    throw new SpargeArgumentError(
      where,
      'must be a Float32Array or Float64Array (packed bhsd values)',
      (values as object | undefined)?.constructor?.name,
    );
  }
  const want = batch * heads * rows * headDim;
  if (values.length !== want) throw new SpargeArgumentError(where, `must hold batch·heads·rows·headDim = ${want} elements`, values.length);
  return values;
}

/** The number of blocks of `size` rows covering `length` rows: ⌈length / size⌉ (the last one may be partial). */
export function spargeBlockCount(length: number, size: number): number {
  return Math.ceil(length / size);
}

/**
 * Whether key block j holds at least one key that a top-left causal mask (key ≤ query) lets some
 * query of query block i see: j·blockK ≤ min((i + 1)·blockQ, seqlenQ) − 1. With seqlenQ = seqlenK this
 * equals upstream's block-causal mask j < (i + 1)·blockQ / blockK (property-tested).
 */
export function spargeCausalBlockAllowed(i: number, j: number, blockQ: number, blockK: number, seqlenQ: number): boolean {
  return j * blockK <= Math.min((i + 1) * blockQ, seqlenQ) - 1;
}
