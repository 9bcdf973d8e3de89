// Test tensors of the attention references, shared by the forward and backward reference specs:
// an operand filled from a value function, a deterministic hash of (b, h, r, d) to fill it with,
// the shape fields both specs draw and a mask arbitrary.
import fc from 'fast-check';
import { encode } from '@tilekit/numeric';
import { causalBottomRight, causalTopLeft, noMask, type AttentionMaskSpec } from '../../mask/attentionMaskSpec.ts';
import type { AttentionOperand, AttentionStorageDType } from '../attentionFwdArgs.ts';
import { attentionTensorSpan, type AttentionTensorStrides } from '../attentionTensorLayout.ts';

/** Extents of a test tensor: batches (1 in group mode), heads, rows per head, head dim. */
export interface AttentionTestDims {
  readonly batches: number;
  readonly nhead: number;
  readonly rows: number;
  readonly hdim: number;
}

/** A value of element (batch b, head h, row r, dim d). */
export type AttentionTestValue = (b: number, h: number, r: number, d: number) => number;

/**
 * A tensor's storage in `strides` from a value function (values exactly representable in the
 * dtype); slots the strides skip hold NaN, so a reference reading them shows it.
 */
export function attentionTestOperand(
  dtype: AttentionStorageDType,
  strides: AttentionTensorStrides,
  dims: AttentionTestDims,
  value: AttentionTestValue,
): AttentionOperand {
  const span = attentionTensorSpan(strides, dims.batches, dims.nhead, dims.rows, dims.hdim);
  const data = dtype === 'fp32' ? new Float32Array(span).fill(NaN) : new Uint16Array(span).fill(dtype === 'fp16' ? 0x7e00 : 0x7fc0);
  for (let b = 0; b < dims.batches; b++)
    for (let h = 0; h < dims.nhead; h++)
      for (let r = 0; r < dims.rows; r++)
        for (let d = 0; d < dims.hdim; d++) {
          const at = b * strides.batch + h * strides.head + r * strides.row + d;
          data[at] = dtype === 'fp32' ? value(b, h, r, d) : encode(dtype, value(b, h, r, d));
        }
  return { dtype, data, strides };
}

/** Deterministic pseudo-random values in [−2, 2) on a 1/64 grid (exact in fp16, bf16 and fp32). */
export function attentionTestHash(seed: number): AttentionTestValue {
  return (b, h, r, d) => {
    let x =
      (seed ^
        Math.imul(b + 1, 0x9e3779b1) ^
        Math.imul(h + 7, 0x85ebca6b) ^
        Math.imul(r + 13, 0xc2b2ae35) ^
        Math.imul(d + 29, 0x27d4eb2f)) >>>
      0;
    x ^= x >>> 15;
    x = Math.imul(x, 0x2c1b3c6d) >>> 0;
    x ^= x >>> 12;
    return ((x & 255) - 128) / 64;
  };
}

/** The shape fields both reference specs draw (per-batch sequences, GQA ratio, K padding in group mode). */
export interface AttentionTestShape {
  readonly dtype: AttentionStorageDType;
  readonly batch: number;
  readonly nheadK: number;
  /** nheadQ / nheadK. */
  readonly ratio: number;
  readonly hdimQ: number;
  readonly hdimV: number;
  readonly group: boolean;
  readonly seqlensQ: readonly number[];
  readonly seqlensK: readonly number[];
  /** Group mode: extra K rows per batch slot beyond the keys used (the per-batch seqlenK). */
  readonly padK: readonly number[];
  readonly mask: AttentionMaskSpec;
  readonly seed: number;
}

/** Masks of every kind: windows with left/right in [−1, reach], generic y/x in [−⌈2·reach/3⌉, 2·reach]. */
export function attentionMaskArb(reach: number): fc.Arbitrary<AttentionMaskSpec> {
  const generic = fc.integer({ min: -Math.ceil((2 * reach) / 3), max: 2 * reach });
  return fc.oneof(
    fc.constantFrom(noMask, causalTopLeft, causalBottomRight),
    fc.record({
      kind: fc.constant('window' as const),
      alignment: fc.constantFrom('topLeft' as const, 'bottomRight' as const),
      left: fc.integer({ min: -1, max: reach }),
      right: fc.integer({ min: -1, max: reach }),
    }),
    fc.record({ kind: fc.constant('generic' as const), y: generic, x: generic }),
  );
}
