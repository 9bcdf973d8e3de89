import { packedAttentionStrides, type AttentionOperand } from '@tilekit/fmha';
import type { AttentionShape } from './attentionShape.ts';
import { normalBits } from './normalBits.ts';
import { decodeBits } from './roundInPlace.ts';

/** One input tensor: its storage for the CPU references and its values for the models. */
export interface AttentionInput {
  readonly operand: AttentionOperand;
  readonly values: Float64Array;
}

/** Q, K, V and dO drawn standard normal in fp32 and rounded to `dtype` (seeds seed, seed + 1, …), packed bhsd. */
export function attentionInputs(
  dtype: 'fp16' | 'bf16',
  shape: AttentionShape,
  seed: number,
): Record<'q' | 'k' | 'v' | 'dO', AttentionInput> {
  const { heads, sq, sk, d } = shape;
  const make = (rows: number, at: number): AttentionInput => {
    const bits = normalBits(dtype, heads * rows * d, seed + at);
    return { operand: { dtype, data: bits, strides: packedAttentionStrides('bhsd', heads, rows, d) }, values: decodeBits(dtype, bits) };
  };
  return { q: make(sq, 0), k: make(sk, 1), v: make(sk, 2), dO: make(sq, 3) };
}
