import { fc, test } from '@fast-check/vitest';
import { checkGemmProblem, gemmOperandElements, GEMM_LAYOUTS } from '@tilekit/kernel-gemm';
import { ArgumentError } from '@tilekit/numeric';
import { describe, expect, it } from 'vitest';
import { gemmOperandRows, packedShape, padRows, unpadRows, type PitchedRows } from './gemmOperandRows.ts';

/** Rows, cols, a pitch ≥ cols, an element size, and packed bytes of that matrix. */
const matrix = fc
  .record({
    rows: fc.integer({ min: 0, max: 9 }),
    cols: fc.integer({ min: 0, max: 9 }),
    extra: fc.integer({ min: 0, max: 5 }),
    e: fc.constantFrom(1, 2, 4),
  })
  .chain(({ rows, cols, extra, e }) =>
    fc
      .uint8Array({ minLength: rows * cols * e, maxLength: rows * cols * e })
      .map((packed) => ({ r: { rows, cols, pitch: cols + extra } as PitchedRows, e, packed })),
  );

describe('gemmOperandRows', () => {
  it("gives REFERENCE_OPS.md's stored shapes per layout, at ours' pitches", () => {
    const ragged = gemmOperandRows(checkGemmProblem({ dtype: 'fp16', m: 4097, n: 4095, k: 4100, lda: 4104, ldb: 4104 }));
    expect(ragged).toEqual({
      a: { rows: 4097, cols: 4100, pitch: 4104 },
      b: { rows: 4095, cols: 4100, pitch: 4104 },
      c: { rows: 4097, cols: 4095, pitch: 4095 },
    });
    const shapes = (layout: (typeof GEMM_LAYOUTS)[number]) => {
      const r = gemmOperandRows(checkGemmProblem({ dtype: 'bf16', m: 3, n: 5, k: 7, layout }));
      return [packedShape(r.a), packedShape(r.b), packedShape(r.c)];
    };
    expect(shapes('tn')).toEqual([
      [3, 7],
      [5, 7],
      [3, 5],
    ]);
    expect(shapes('nn')).toEqual([
      [7, 3],
      [5, 7],
      [3, 5],
    ]);
    expect(shapes('tt')).toEqual([
      [3, 7],
      [7, 5],
      [3, 5],
    ]);
    expect(shapes('nt')).toEqual([
      [7, 3],
      [7, 5],
      [3, 5],
    ]);
  });

  test.prop([
    fc.constantFrom(...GEMM_LAYOUTS),
    fc.integer({ min: 1, max: 40 }),
    fc.integer({ min: 1, max: 40 }),
    fc.integer({ min: 1, max: 40 }),
    fc.integer({ min: 0, max: 9 }),
  ])("covers the kernel's operand extents (rows · pitch ≥ gemmOperandElements)", (layout, m, n, k, pad) => {
    const base = checkGemmProblem({ dtype: 'fp16', m, n, k, layout });
    const p = checkGemmProblem({ dtype: 'fp16', m, n, k, layout, lda: base.lda + pad, ldb: base.ldb + pad, ldc: base.ldc + pad });
    const r = gemmOperandRows(p);
    const extents = gemmOperandElements(p);
    expect(r.a.rows * r.a.pitch).toBeGreaterThanOrEqual(extents.a);
    expect(r.b.rows * r.b.pitch).toBeGreaterThanOrEqual(extents.b);
    expect(r.c.rows * r.c.pitch).toBeGreaterThanOrEqual(extents.c);
    expect([r.a.pitch, r.b.pitch, r.c.pitch]).toEqual([p.lda, p.ldb, p.ldc]);
  });

  it('has no batch', () => {
    expect(() => gemmOperandRows(checkGemmProblem({ dtype: 'fp16', m: 8, n: 8, k: 8, batch: 2 }))).toThrow(/batch: must be 1/);
  });
});

describe('padRows / unpadRows', () => {
  test.prop([matrix])('unpadRows(padRows(x)) = x', ({ r, e, packed }) => {
    expect(unpadRows(padRows(packed, r, e), r, e)).toEqual(packed);
  });

  test.prop([matrix])('padRows puts row i at i · pitch and zeros between rows', ({ r, e, packed }) => {
    const padded = padRows(packed, r, e);
    expect(padded.byteLength).toBe(r.rows * r.pitch * e);
    for (let i = 0; i < r.rows; i++) {
      expect(padded.subarray(i * r.pitch * e, (i * r.pitch + r.cols) * e)).toEqual(packed.subarray(i * r.cols * e, (i + 1) * r.cols * e));
      expect(padded.subarray((i * r.pitch + r.cols) * e, (i + 1) * r.pitch * e).every((byte) => byte === 0)).toBe(true);
    }
  });

  test.prop([matrix, fc.integer({ min: 0, max: 255 })])('unpadRows ignores what lies between rows', ({ r, e, packed }, junk) => {
    const padded = padRows(packed, r, e);
    const dirty = padded.map((byte, i) => (i % (r.pitch * e) >= r.cols * e ? junk : byte));
    expect(unpadRows(dirty, r, e)).toEqual(packed);
  });

  it('copies nothing when the pitch is the packed one', () => {
    const packed = Uint8Array.from({ length: 12 }, (_, i) => i);
    const r = { rows: 3, cols: 2, pitch: 2 };
    expect(padRows(packed, r, 2)).toBe(packed);
    const unpadded = unpadRows(packed, r, 2);
    expect(unpadded.buffer).toBe(packed.buffer);
    expect(unpadded).toEqual(packed);
  });

  it('accepts a pitched buffer that ends after the last row (a kernel extent)', () => {
    const r = { rows: 2, cols: 2, pitch: 3 };
    expect(unpadRows(Uint8Array.of(1, 2, 0, 3, 4), r, 1)).toEqual(Uint8Array.of(1, 2, 3, 4));
  });

  it('rejects sizes that do not match', () => {
    expect(() => padRows(new Uint8Array(5), { rows: 2, cols: 3, pitch: 4 }, 1)).toThrow(ArgumentError);
    expect(() => padRows(new Uint8Array(6), { rows: 2, cols: 3, pitch: 2 }, 1)).toThrow(/pitch: must be at least cols = 3/);
    expect(() => unpadRows(new Uint8Array(6), { rows: 2, cols: 3, pitch: 4 }, 1)).toThrow(
      /must hold 2 rows of 3 elements 4 apart \(7 bytes\)/,
    );
    expect(() => unpadRows(new Uint8Array(6), { rows: -1, cols: 3, pitch: 4 }, 1)).toThrow(/rows: must be a non-negative integer/);
  });
});
