import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  AttentionMaskError,
  causalBottomRight,
  causalTopLeft,
  noMask,
  parseAttentionMaskSpec,
  slidingWindowMask,
  type AttentionMaskSpec,
} from './attentionMaskSpec.ts';
import { makeGenericAttentionMask, maskCoordinates, type GenericAttentionMask } from './genericAttentionMask.ts';

/** Specs over small sizes so windows cross the sequences' edges often; generic coordinates reach past the clamps. */
const specArb: fc.Arbitrary<AttentionMaskSpec> = fc.oneof(
  fc.constant(noMask),
  fc.constantFrom(causalTopLeft, causalBottomRight),
  fc.record({
    kind: fc.constant('window' as const),
    alignment: fc.constantFrom('topLeft' as const, 'bottomRight' as const),
    left: fc.integer({ min: -1, max: 40 }),
    right: fc.integer({ min: -1, max: 40 }),
  }),
  fc.record({ kind: fc.constant('generic' as const), y: fc.integer({ min: -60, max: 60 }), x: fc.integer({ min: -60, max: 60 }) }),
);
const maskArb = fc
  .tuple(specArb, fc.integer({ min: 0, max: 48 }), fc.integer({ min: 0, max: 48 }))
  .map(([s, sq, sk]) => makeGenericAttentionMask(s, sq, sk));
const tileSizeArb = fc.oneof(fc.integer({ min: 1, max: 4 }), fc.constantFrom(8, 16), fc.integer({ min: 5, max: 24 }));
const tileArb = fc.record({ tileM: tileSizeArb, tileN: tileSizeArb });

/** Every tile origin t·size for t from −1 to one past the sequence. */
const origins = (size: number, length: number): number[] => range(-1, Math.ceil(length / size) + 2).map((t) => t * size);

function keptColumns(m: GenericAttentionMask, rows: Iterable<number>): number[] {
  const out: number[] = [];
  for (const i of rows) for (let j = -2; j < m.seqlenK + 2; j++) if (!m.isMasked(i, j)) out.push(j);
  return out;
}

const range = (a: number, b: number): number[] => Array.from({ length: Math.max(0, b - a) }, (_, k) => a + k);

describe('GenericAttentionMask: element semantics', () => {
  it('golden: causal top-left keeps j ≤ i; bottom-right keeps j ≤ i + sk − sq; windows keep i − left ≤ j ≤ i + right', () => {
    const kept = (m: GenericAttentionMask): string[] =>
      range(0, m.seqlenQ).map((i) =>
        range(0, m.seqlenK)
          .map((j) => (m.isMasked(i, j) ? '.' : '1'))
          .join(''),
      );
    expect(kept(makeGenericAttentionMask(causalTopLeft, 3, 5))).toEqual(['1....', '11...', '111..']);
    expect(kept(makeGenericAttentionMask(causalBottomRight, 3, 5))).toEqual(['111..', '1111.', '11111']);
    expect(kept(makeGenericAttentionMask(causalBottomRight, 5, 3))).toEqual(['...', '...', '1..', '11.', '111']);
    expect(kept(makeGenericAttentionMask(slidingWindowMask(1, 1), 4, 4))).toEqual(['11..', '111.', '.111', '..11']);
    expect(kept(makeGenericAttentionMask(slidingWindowMask(0, 1, 'bottomRight'), 3, 5))).toEqual(['..11.', '...11', '....1']);
    expect(kept(makeGenericAttentionMask(noMask, 2, 3))).toEqual(['111', '111']);
    expect(kept(makeGenericAttentionMask(parseAttentionMaskSpec('g:2,1'), 3, 3))).toEqual(['1..', '11.', '.11']);
  });

  it("equals CK's unclamped formula (keep iff i − y < j < min(i + x, sk)) on every element of the sequences", () => {
    fc.assert(
      fc.property(specArb, fc.integer({ min: 0, max: 40 }), fc.integer({ min: 0, max: 40 }), (spec, sq, sk) => {
        let y: number;
        let x: number;
        if (spec.kind === 'none') [y, x] = [sq, sk];
        else if (spec.kind === 'generic') [y, x] = [spec.y, spec.x];
        else {
          const tl = spec.alignment === 'topLeft';
          const left = spec.left < 0 ? (tl ? sq - 1 : sk - 1) : spec.left;
          const right = spec.right < 0 ? (tl ? sk - 1 : sq - 1) : spec.right;
          [y, x] = [1 + left + (tl ? 0 : sq - sk), 1 + right + (tl ? 0 : sk - sq)];
        }
        const m = makeGenericAttentionMask(spec, sq, sk);
        for (let i = 0; i < sq; i++)
          for (let j = 0; j < sk; j++) expect(m.isMasked(i, j)).toBe(!(j >= i - y + 1 && j < Math.min(i + x, sk)));
      }),
    );
  });

  it('padding rows and columns are masked; each row keeps one contiguous interval (keyRangeOfRow)', () => {
    fc.assert(
      fc.property(maskArb, (m) => {
        expect(m.isMasked(-1, 0)).toBe(true);
        expect(m.isMasked(m.seqlenQ, 0)).toBe(true);
        expect(m.isMasked(0, -1)).toBe(true);
        expect(m.isMasked(0, m.seqlenK)).toBe(true);
        for (let i = -1; i <= m.seqlenQ; i++) {
          const kept = keptColumns(m, [i]);
          const [lo, hi] = m.keyRangeOfRow(i);
          if (kept.length === 0) expect([lo, hi]).toEqual([0, 0]);
          else expect(range(lo, hi)).toEqual(kept);
          expect(m.isRowFullyMasked(i)).toBe(kept.length === 0);
        }
      }),
    );
  });

  it('some windows fully mask some rows (and all rows of some tiles)', () => {
    const m = makeGenericAttentionMask(causalBottomRight, 10, 4);
    expect(range(0, 10).filter((i) => m.isRowFullyMasked(i))).toEqual([0, 1, 2, 3, 4, 5]);
    expect(m.getTileRangeAlongX(0, 4, 2)).toEqual([0, 0]);
    expect(m.getTileRangeAlongX(4, 4, 2)).toEqual([0, 2]);
    const w = makeGenericAttentionMask(slidingWindowMask(0, 0, 'topLeft'), 8, 3);
    expect(range(0, 8).filter((i) => w.isRowFullyMasked(i))).toEqual([3, 4, 5, 6, 7]);
    expect(w.getTileRangeAlongX(4, 4, 4)).toEqual([0, 0]);
    const none = makeGenericAttentionMask(parseAttentionMaskSpec('g:0,1'), 5, 5); // x + y = 1: nothing kept
    expect(range(0, 5).every((i) => none.isRowFullyMasked(i))).toBe(true);
    expect(none.getTileRangeAlongX(0, 8, 8)).toEqual([0, 0]);
  });

  it('maskCoordinates: unbounded sides reach the far corner; none keeps everything', () => {
    expect(maskCoordinates(causalTopLeft, 7, 9)).toEqual({ y: 7, x: 1 });
    expect(maskCoordinates(causalBottomRight, 7, 9)).toEqual({ y: 7, x: 3 });
    expect(maskCoordinates(noMask, 7, 9)).toEqual({ y: 7, x: 9 });
    expect(maskCoordinates(slidingWindowMask(1_000_000, 1_000_000), 7, 9)).toEqual({ y: 7, x: 9 });
  });
});

describe('GenericAttentionMask: tile queries vs brute force', () => {
  it('getTileRangeAlongX is the smallest tileN-aligned range holding every kept key of the tile rows ([0, 0] when none)', () => {
    fc.assert(
      fc.property(maskArb, tileArb, (m, { tileM, tileN }) => {
        for (const i0 of origins(tileM, m.seqlenQ)) {
          const kept = keptColumns(m, range(i0, i0 + tileM));
          const [start, end] = m.getTileRangeAlongX(i0, tileM, tileN);
          if (kept.length === 0) {
            expect([start, end]).toEqual([0, 0]);
            continue;
          }
          const lo = Math.min(...kept);
          const hi = Math.max(...kept) + 1;
          expect([start, end]).toEqual([Math.floor(lo / tileN) * tileN, Math.ceil(hi / tileN) * tileN]);
          // Hence: no kept key outside, and the first and last tiles each hold one.
          expect(kept.some((j) => j >= start && j < start + tileN)).toBe(true);
          expect(kept.some((j) => j >= end - tileN && j < end)).toBe(true);
        }
      }),
    );
  });

  it('getTileRangeAlongY is the smallest tileM-aligned range holding every row that keeps a column of the tile ([0, 0] when none)', () => {
    fc.assert(
      fc.property(maskArb, tileArb, (m, { tileM, tileN }) => {
        for (const j0 of origins(tileN, m.seqlenK)) {
          const rows: number[] = [];
          for (let i = 0; i < m.seqlenQ; i++) for (let j = j0; j < j0 + tileN; j++) if (!m.isMasked(i, j)) rows.push(i);
          const [start, end] = m.getTileRangeAlongY(j0, tileN, tileM);
          if (rows.length === 0) {
            expect([start, end]).toEqual([0, 0]);
            continue;
          }
          expect([start, end]).toEqual([Math.floor(Math.min(...rows) / tileM) * tileM, Math.ceil((Math.max(...rows) + 1) / tileM) * tileM]);
        }
      }),
    );
  });

  it('isEdgeTile ⇔ a row of the tile inside the sequence masks a column of the tile', () => {
    fc.assert(
      fc.property(maskArb, tileArb, (m, { tileM, tileN }) => {
        for (const i0 of origins(tileM, m.seqlenQ)) {
          for (const j0 of origins(tileN, m.seqlenK)) {
            let brute = false;
            for (let i = Math.max(i0, 0); i < Math.min(i0 + tileM, m.seqlenQ); i++)
              for (let j = j0; j < j0 + tileN; j++) brute ||= m.isMasked(i, j);
            expect(m.isEdgeTile(i0, j0, tileM, tileN)).toBe(brute);
          }
        }
      }),
    );
  });

  it('every tile of the range holds a kept element; tiles outside the range hold none', () => {
    fc.assert(
      fc.property(maskArb, tileArb, (m, { tileM, tileN }) => {
        for (const i0 of origins(tileM, m.seqlenQ)) {
          const [start, end] = m.getTileRangeAlongX(i0, tileM, tileN);
          const kept = keptColumns(m, range(i0, i0 + tileM));
          for (const j0 of origins(tileN, m.seqlenK)) expect(kept.some((j) => j >= j0 && j < j0 + tileN)).toBe(j0 >= start && j0 < end);
        }
      }),
    );
  });

  it('split ranges are tileN-aligned, in order, and partition the tile range', () => {
    fc.assert(
      fc.property(maskArb, tileArb, fc.integer({ min: 1, max: 9 }), (m, { tileM, tileN }, numSplits) => {
        for (const i0 of origins(tileM, m.seqlenQ)) {
          const [start, end] = m.getTileRangeAlongX(i0, tileM, tileN);
          const pieces = range(0, numSplits)
            .map((s) => m.getTileRangeAlongXForSplit(i0, tileM, tileN, numSplits, s))
            .filter(([s, e]) => e > s);
          for (const [s, e] of pieces) expect([s % tileN, e % tileN]).toEqual([0, 0]);
          expect(pieces.flatMap(([s, e]) => range(s, e))).toEqual(range(start, end));
          expect(m.getTileRangeAlongXForSplit(i0, tileM, tileN, 1, 0)).toEqual([start, end]);
        }
      }),
    );
  });

  it('rejects bad arguments with typed errors', () => {
    expect(() => makeGenericAttentionMask(noMask, -1, 4)).toThrow(AttentionMaskError);
    expect(() => makeGenericAttentionMask(noMask, 4, 2 ** 31)).toThrow(/seqlenK: must be an integer in \[0, 2\^30\]/);
    const m = makeGenericAttentionMask(causalTopLeft, 8, 8);
    expect(() => m.getTileRangeAlongX(0, 0, 4)).toThrow(/tileM: must be a positive integer/);
    expect(() => m.isEdgeTile(0, 0.5, 4, 4)).toThrow(/j0/);
    expect(() => m.getTileRangeAlongXForSplit(0, 4, 4, 2, 2)).toThrow(/iSplit: must be in \[0, numSplits = 2\)/);
  });
});
