// CPU references of the permute: the HostTensor view semantics (for -v=1 and the GPU tests on odd
// shapes) and a bit-exact row-wise comparison fast enough for gigabyte tensors (the benchmark).
import type { HostTensor } from '@tilekit/host';
import { ArgumentError } from '@tilekit/numeric';
import { permuteElements, permuteShapes, type PermuteProblem } from './permuteProblem.ts';

/** `input.permute(axes).contiguous()`: the expected output of `problem` for `input` (checked to have the input shape). */
export function permuteReference(problem: PermuteProblem, input: HostTensor): HostTensor {
  const { input: shape, axes } = permuteShapes(problem);
  if (input.shape.length !== shape.length || input.shape.some((n, i) => n !== shape[i])) {
    throw new ArgumentError('input', `must have shape [${shape.join(', ')}]`, input.shape);
  }
  return input.permute(axes).contiguous();
}

/** Raw element bits: 16-bit for fp16/bf16, 32-bit for fp32. */
export type ElementBits = Uint16Array | Uint32Array;

/** The raw bits of a tensor's storage (fp32's Float32Array seen as Uint32Array; no copy). */
export function storageBits(tensor: HostTensor): ElementBits {
  const s = tensor.storage;
  if (s instanceof Uint16Array || s instanceof Uint32Array) return s;
  if (s instanceof Float32Array) return new Uint32Array(s.buffer, s.byteOffset, s.length);
  throw new ArgumentError('tensor', 'must hold 16- or 32-bit elements', tensor.dtype.name);
}

/** Result of `comparePermutedBits`. */
export interface PermuteComparison {
  readonly elements: number;
  readonly mismatches: number;
  /** The first mismatching output element (row-major index), with the bits found and expected. */
  readonly first?: { readonly index: number; readonly got: number; readonly want: number };
}

/**
 * Compares `output` with the permute of `input` bit for bit, row by row (the contiguous last dim
 * for head permutes, 64 × 64 blocks for transposes), without building the reference tensor.
 * Postcondition (tested): agrees with `permuteReference` on every element.
 */
export function comparePermutedBits(problem: PermuteProblem, input: ElementBits, output: ElementBits): PermuteComparison {
  const elements = permuteElements(problem);
  if (input.length < elements || output.length < elements)
    throw new ArgumentError('input/output', `must hold ${elements} elements`, [input.length, output.length]);
  let mismatches = 0;
  let first: PermuteComparison['first'];
  const check = (o: number, i: number): void => {
    if (output[o] !== input[i]) {
      if (mismatches === 0) first = { index: o, got: output[o]!, want: input[i]! };
      mismatches++;
    }
  };
  if (problem.kind === 'transpose') {
    const { m: M, n: N } = problem;
    for (let n0 = 0; n0 < N; n0 += 64) {
      for (let m0 = 0; m0 < M; m0 += 64) {
        for (let n = n0; n < Math.min(N, n0 + 64); n++) for (let m = m0; m < Math.min(M, m0 + 64); m++) check(n * M + m, m * N + n);
      }
    }
  } else {
    const { b: B, d: D } = problem;
    // Input [B, X, Y, D] → output [B, Y, X, D].
    const [X, Y] = problem.kind === 'bhsd2bshd' ? [problem.h, problem.s] : [problem.s, problem.h];
    for (let b = 0; b < B; b++) {
      for (let y = 0; y < Y; y++) {
        for (let x = 0; x < X; x++) {
          const o = ((b * Y + y) * X + x) * D;
          const i = ((b * X + x) * Y + y) * D;
          for (let k = 0; k < D; k++) check(o + k, i + k);
        }
      }
    }
  }
  return first === undefined ? { elements, mismatches } : { elements, mismatches, first };
}

/**
 * Fills `bits` with a seeded pseudo-random pattern (xorshift32), every element distinct from its
 * neighbours with high probability, so a misplaced element is caught. The top exponent bit is
 * cleared (bit 14 of 16-bit, bit 30 of 32-bit elements), so every fp16, bf16 and fp32 value is
 * finite: no NaN, whose payload a host copy through a JS number may not keep. Fast: one pass.
 */
export function fillPatternBits(bits: ElementBits, seed: number): ElementBits {
  let x = (seed | 0) === 0 ? 0x9e3779b9 | 0 : seed | 0;
  const mask = bits instanceof Uint16Array ? 0xbfff : 0xbfffffff;
  for (let i = 0; i < bits.length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    bits[i] = (x & mask) >>> 0;
  }
  return bits;
}
