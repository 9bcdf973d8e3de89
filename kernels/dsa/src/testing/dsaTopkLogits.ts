// Seeded logit rows for the top-k tests (the CPU property specs and the GPU spec): values of one of
// several styles — spread, narrow (long runs of equal top digits), few distinct values, all equal,
// masked (−∞ runs, NaN, ±0) — with optional lengths (0, 1, past the row, negative, any count).
import { Prng } from '@tilekit/host';
import fc from 'fast-check';
import type { DsaTopkRows } from '../reference/dsaTopkReference.ts';

/** How a row's values are drawn. */
export type DsaTopkLogitStyle = 'normal' | 'spread' | 'narrow' | 'ties' | 'allEqual' | 'masked';

/** Every style, in a fixed order. */
export const DSA_TOPK_LOGIT_STYLES: readonly DsaTopkLogitStyle[] = Object.freeze([
  'normal',
  'spread',
  'narrow',
  'ties',
  'allEqual',
  'masked',
]);

/** What {@link dsaTopkLogits} draws. */
export interface DsaTopkLogitOptions {
  readonly seed: number;
  readonly rows: number;
  readonly rowStride: number;
  readonly k: number;
  readonly style: DsaTopkLogitStyle;
  /** No lengths (every row is rowStride long), random ones (some 0, 1, > rowStride, < 0), or these. */
  readonly lengths?: 'none' | 'random' | readonly number[];
  /** Distinct values of a 'ties' row (default: 1 … 6, drawn). */
  readonly palette?: number;
}

function value(rng: Prng, style: DsaTopkLogitStyle, palette: readonly number[]): number {
  switch (style) {
    case 'normal':
      return rng.nextNormal();
    case 'spread':
      return (rng.nextFloat() < 0.5 ? -1 : 1) * 2 ** rng.nextRange(-60, 60);
    case 'narrow':
      return 1 + rng.nextInt(0, 63) / 64 + rng.nextInt(0, 3) * 2 ** -20;
    case 'ties':
    case 'allEqual':
      return palette[rng.nextInt(0, palette.length - 1)]!;
    case 'masked': {
      const u = rng.nextFloat();
      if (u < 0.1) return Number.NaN;
      if (u < 0.15) return rng.nextFloat() < 0.5 ? -0 : 0;
      return u < 0.2 ? Number.POSITIVE_INFINITY : rng.nextNormal();
    }
  }
}

function fillRow(rng: Prng, out: Float32Array, base: number, n: number, style: DsaTopkLogitStyle, distinct?: number): void {
  const palette =
    style === 'allEqual'
      ? [rng.nextNormal()]
      : Array.from({ length: distinct ?? rng.nextInt(1, 6) }, (_, i) => (i === 0 ? 0 : rng.nextNormal()));
  for (let p = 0; p < n; p++) out[base + p] = value(rng, style, palette);
  if (style !== 'masked') return;
  for (let runs = rng.nextInt(0, 4); runs > 0; runs--) {
    const start = rng.nextInt(0, n - 1);
    out.fill(Number.NEGATIVE_INFINITY, base + start, base + Math.min(n, start + rng.nextInt(1, 1 + (n >> 2))));
  }
}

function randomLength(rng: Prng, rowStride: number): number {
  const u = rng.nextFloat();
  if (u < 0.1) return 0;
  if (u < 0.2) return 1;
  if (u < 0.25) return rowStride + rng.nextInt(1, 100);
  if (u < 0.3) return -rng.nextInt(1, 100);
  return rng.nextInt(0, rowStride);
}

/** Seeded rows of logits ([rows][rowStride] fp32; padding past each length is filled too, with values that must be ignored). */
export function dsaTopkLogits(o: DsaTopkLogitOptions): DsaTopkRows {
  const rng = new Prng(o.seed);
  const logits = new Float32Array(o.rows * o.rowStride);
  for (let r = 0; r < o.rows; r++) fillRow(rng, logits, r * o.rowStride, o.rowStride, o.style, o.palette);
  const lengths =
    o.lengths === undefined || o.lengths === 'none'
      ? undefined
      : o.lengths === 'random'
        ? Int32Array.from({ length: o.rows }, () => randomLength(rng, o.rowStride))
        : Int32Array.from(o.lengths);
  return { logits, rows: o.rows, rowStride: o.rowStride, k: o.k, ...(lengths === undefined ? {} : { lengths }) };
}

/** Random rows for property specs: every style, lengths or none, k from 1 to past the row. */
export function dsaTopkLogitArbitrary(limits: { readonly maxRows: number; readonly maxRowStride: number }): fc.Arbitrary<DsaTopkRows> {
  return fc
    .record({
      seed: fc.nat(),
      rows: fc.integer({ min: 1, max: limits.maxRows }),
      rowStride: fc.integer({ min: 1, max: limits.maxRowStride }),
      style: fc.constantFrom(...DSA_TOPK_LOGIT_STYLES),
      lengths: fc.constantFrom<'none' | 'random'>('none', 'random'),
      kFraction: fc.oneof(fc.constantFrom(0, 1, 2), fc.double({ min: 0, max: 1.2, noNaN: true })),
    })
    .map((o) => dsaTopkLogits({ ...o, k: Math.max(1, Math.round(o.kFraction * o.rowStride)) }));
}
