import fc from 'fast-check';
import {
  packedAttentionStrides,
  referenceAttentionBwd,
  referenceAttentionFwd,
  type AttentionBwdArgs,
  type AttentionMaskSpec,
  type AttentionOperand,
} from '@tilekit/fmha';
import { describe, expect, it } from 'vitest';
import { ffpaBwdSplitDModel, type FfpaBwdModelShape } from './ffpaBwdSplitDModel.ts';

/** Deterministic values in [−1, 1) (a 32-bit LCG). */
function values(n: number, seed: number): Float32Array {
  const out = new Float32Array(n);
  let s = seed >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = s / 2 ** 31 - 1;
  }
  return out;
}

interface Problem {
  readonly hdimQ: number;
  readonly hdimV: number;
  readonly nheadK: number;
  readonly ratio: number;
  readonly seqlensQ: readonly number[];
  readonly seqlensK: readonly number[];
  readonly group: boolean;
  readonly mask: AttentionMaskSpec;
  readonly seed: number;
}

const starts = (lens: readonly number[]): number[] => lens.reduce<number[]>((acc, l) => [...acc, acc[acc.length - 1]! + l], [0]);

/** The backward problem: fp32 Q/K/V/dO packed bhsd, O and LSE from the forward reference. */
function problem(p: Problem): AttentionBwdArgs {
  const batch = p.seqlensQ.length;
  const nheadQ = p.nheadK * p.ratio;
  const rowsQ = p.group ? starts(p.seqlensQ)[batch]! : p.seqlensQ[0]!;
  const rowsK = p.group ? starts(p.seqlensK)[batch]! : p.seqlensK[0]!;
  const batches = p.group ? 1 : batch;
  const op = (nhead: number, rows: number, hdim: number, salt: number): AttentionOperand => ({
    dtype: 'fp32',
    data: values(batches * nhead * rows * hdim, p.seed * 7 + salt),
    strides: packedAttentionStrides('bhsd', nhead, rows, hdim),
  });
  const mode = p.group ? { seqstartQ: starts(p.seqlensQ), seqstartK: starts(p.seqlensK) } : { seqlenQ: rowsQ, seqlenK: rowsK };
  const fwd = {
    batch,
    nheadQ,
    nheadK: p.nheadK,
    hdimQ: p.hdimQ,
    hdimV: p.hdimV,
    ...mode,
    q: op(nheadQ, rowsQ, p.hdimQ, 1),
    k: op(p.nheadK, rowsK, p.hdimQ, 2),
    v: op(p.nheadK, rowsK, p.hdimV, 3),
    mask: p.mask,
  };
  const f = referenceAttentionFwd(fwd);
  return {
    ...fwd,
    o: { dtype: 'fp32', data: f.o, strides: packedAttentionStrides('bhsd', nheadQ, rowsQ, p.hdimV) },
    lse: f.lse,
    dO: op(nheadQ, rowsQ, p.hdimV, 4),
  };
}

/** max |x − y| over max(1, max |y|). */
function relError(x: Float32Array, y: Float32Array): number {
  expect(x.length).toBe(y.length);
  let err = 0;
  let scale = 1;
  for (let i = 0; i < x.length; i++) {
    err = Math.max(err, Math.abs(x[i]! - y[i]!));
    scale = Math.max(scale, Math.abs(y[i]!));
  }
  return err / scale;
}

function compare(p: Problem, shape: FfpaBwdModelShape): number {
  const args = problem(p);
  const ref = referenceAttentionBwd(args);
  const model = ffpaBwdSplitDModel(args, shape);
  return Math.max(relError(model.dq, ref.dq), relError(model.dk, ref.dk), relError(model.dv, ref.dv));
}

const MASKS: readonly AttentionMaskSpec[] = [
  { kind: 'none' },
  { kind: 'window', alignment: 'topLeft', left: -1, right: 0 },
  { kind: 'window', alignment: 'bottomRight', left: -1, right: 0 },
  { kind: 'window', alignment: 'bottomRight', left: 40, right: 3 },
];

describe('the split-D backward decomposition (CPU model of the kernel loops) against referenceAttentionBwd', () => {
  it.each(MASKS)('d 128, 64-column chunks, 2 slices of 64, ragged group-mode seqlens 1, 17, 127, GQA 2: %o', (mask) => {
    const p: Problem = {
      hdimQ: 128,
      hdimV: 128,
      nheadK: 1,
      ratio: 2,
      seqlensQ: [1, 17, 127],
      seqlensK: [1, 17, 127],
      group: true,
      mask,
      seed: 3,
    };
    expect(compare(p, { sliceWidth: 64, stages: 2 })).toBeLessThan(1e-5);
  });

  it('d 192 × d_v 64 (slices past d_v own dK columns only), batch mode, seqlen_q ≠ seqlen_k, 3 stages', () => {
    const p: Problem = {
      hdimQ: 192,
      hdimV: 64,
      nheadK: 2,
      ratio: 1,
      seqlensQ: [70, 70],
      seqlensK: [33, 33],
      group: false,
      mask: MASKS[2]!,
      seed: 5,
    };
    expect(compare(p, { sliceWidth: 64, stages: 3 })).toBeLessThan(1e-5);
    expect(compare({ ...p, hdimQ: 64, hdimV: 192 }, { sliceWidth: 128, stages: 2 })).toBeLessThan(1e-5);
  });

  it('random shapes, masks and slice widths (property)', () => {
    fc.assert(
      fc.property(
        fc.record({
          hdimQ: fc.constantFrom(64, 128),
          hdimV: fc.constantFrom(64, 128),
          ratio: fc.constantFrom(1, 2),
          seqlensQ: fc.array(fc.integer({ min: 0, max: 80 }), { minLength: 1, maxLength: 2 }),
          seqlensK: fc.array(fc.integer({ min: 0, max: 80 }), { minLength: 2, maxLength: 2 }),
          mask: fc.constantFrom(...MASKS),
          seed: fc.integer({ min: 1, max: 1000 }),
          width: fc.constantFrom(64, 128),
        }),
        (r) => {
          const p: Problem = { ...r, nheadK: 1, group: true, seqlensK: r.seqlensK.slice(0, r.seqlensQ.length) };
          expect(compare(p, { sliceWidth: r.width, stages: 2 })).toBeLessThan(1e-5);
        },
      ),
      { numRuns: 8 },
    );
  });

  it('a wrong decomposition fails: a column chunk no slice owns', () => {
    const p: Problem = {
      hdimQ: 128,
      hdimV: 128,
      nheadK: 1,
      ratio: 1,
      seqlensQ: [17],
      seqlensK: [40],
      group: true,
      mask: MASKS[0]!,
      seed: 9,
    };
    expect(compare(p, { sliceWidth: 64, stages: 2, chunk0: (s) => Math.min(s + 1, 1) })).toBeGreaterThan(1e-2);
    expect(compare(p, { sliceWidth: 64, stages: 2, chunk0: () => 0 })).toBeGreaterThan(1e-2);
  });
});
