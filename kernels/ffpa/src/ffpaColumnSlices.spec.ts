// ffpaColumnSlices: every claim of its doc comment as a property over the multiples of 64 in
// [64, 8192] (cover [0, hdimV) in order, fewest slices, widths multiples of 64 of at most 512 that
// differ by at most 64, wider first), the golden splits, and the typed error for an invalid hdimV.
import { ArgumentError } from '@tilekit/numeric';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FFPA_MAX_SLICE_COLUMNS, ffpaColumnSlices } from './ffpaColumnSlices.ts';

/** The seed of every property here (recorded for determinism). */
const SEED = 0xff_9a_01;

/** Any multiple of 64 in [64, 8192]. */
const hdimVs = fc.integer({ min: 1, max: 128 }).map((k) => 64 * k);

describe('ffpaColumnSlices', () => {
  it('covers [0, hdimV) contiguously, in order, with positive widths', () => {
    fc.assert(
      fc.property(hdimVs, (hdimV) => {
        const slices = ffpaColumnSlices(hdimV);
        let end = 0;
        for (const s of slices) {
          expect(s.offset).toBe(end);
          expect(s.width).toBeGreaterThan(0);
          end = s.offset + s.width;
        }
        expect(end).toBe(hdimV);
      }),
      { seed: SEED, numRuns: 300 },
    );
  });

  it('uses the fewest slices: ceil(hdimV / 512), so one fewer could not hold hdimV columns', () => {
    fc.assert(
      fc.property(hdimVs, (hdimV) => {
        const n = ffpaColumnSlices(hdimV).length;
        expect(n).toBe(Math.ceil(hdimV / 512));
        expect((n - 1) * FFPA_MAX_SLICE_COLUMNS).toBeLessThan(hdimV);
        expect(n * FFPA_MAX_SLICE_COLUMNS).toBeGreaterThanOrEqual(hdimV);
      }),
      { seed: SEED + 1, numRuns: 300 },
    );
  });

  it('widths are multiples of 64 (offsets too), at most 512, differ by at most 64, wider first', () => {
    expect(FFPA_MAX_SLICE_COLUMNS).toBe(512);
    fc.assert(
      fc.property(hdimVs, (hdimV) => {
        const widths = ffpaColumnSlices(hdimV).map((s) => s.width);
        for (const s of ffpaColumnSlices(hdimV)) {
          expect(s.width % 64).toBe(0);
          expect(s.offset % 64).toBe(0);
          expect(s.width).toBeLessThanOrEqual(512);
        }
        expect(Math.max(...widths) - Math.min(...widths)).toBeLessThanOrEqual(64);
        for (let i = 1; i < widths.length; i++) expect(widths[i]).toBeLessThanOrEqual(widths[i - 1]!);
      }),
      { seed: SEED + 2, numRuns: 300 },
    );
  });

  it.each([
    [320, [320]],
    [512, [512]],
    [576, [320, 256]],
    [704, [384, 320]],
    [1024, [512, 512]],
  ])('golden: %i → %j', (hdimV, widths) => {
    const slices = ffpaColumnSlices(hdimV);
    expect(slices.map((s) => s.width)).toEqual(widths);
    expect(slices.map((s) => s.offset)).toEqual(widths.map((_, i) => widths.slice(0, i).reduce((a, w) => a + w, 0)));
  });

  it.each([0, -64, 100, 1.5, Number.NaN, Infinity, '512'])('rejects hdimV %j with ArgumentError naming hdimV', (hdimV) => {
    let error: unknown;
    try {
      ffpaColumnSlices(hdimV as number);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ArgumentError);
    expect((error as ArgumentError).argument).toBe('hdimV');
    expect((error as ArgumentError).message).toMatch(/^hdimV: must be a positive multiple of 64/);
  });

  it('rejects every non-multiple of 64 and every non-positive integer (property)', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.integer({ min: 1, max: 8192 }).filter((n) => n % 64 !== 0),
          fc.integer({ min: -8192, max: 0 }),
          fc.double({ noInteger: true }),
        ),
        (hdimV) => {
          expect(() => ffpaColumnSlices(hdimV)).toThrow(ArgumentError);
        },
      ),
      { seed: SEED + 3, numRuns: 300 },
    );
  });
});
