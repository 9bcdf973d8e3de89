// The `sparge` check's `q_dequant` / `k_dequant` aux tensors of an int8 case: the values our int8
// Q·Kᵀ multiplies, int8 · per-block scale (the kernel scales the int32 product by q_scale · k_scale),
// as fp32 bhsd.
import { spargeBlockCount, spargeDequantizeBlocksInt8 } from '@tilekit/kernel-sparge';

/** One tensor as the GPU quantized it: int8 values (b, heads, seqlen, d) and one fp32 scale per (b, head, block). */
export interface SpargeInt8Tensor {
  readonly values: Int8Array;
  readonly scales: Float32Array;
}

/** The shape of a quantized tensor and its block rows. */
export interface SpargeInt8Shape {
  readonly batch: number;
  readonly heads: number;
  readonly seqlen: number;
  readonly headDim: number;
  readonly blockSize: number;
}

/**
 * int8 · scale of every element, rounded to fp32 (the product of an int8 and an fp32 is exact in
 * float64, so this is the fp32 product), through the kernel library's spargeDequantizeBlocksInt8.
 * @throws Error when the value or scale counts do not match the shape.
 */
export function spargeDequantFp32(x: SpargeInt8Tensor, s: SpargeInt8Shape): Float32Array {
  const elements = s.batch * s.heads * s.seqlen * s.headDim;
  const blocks = s.batch * s.heads * spargeBlockCount(s.seqlen, s.blockSize);
  if (x.values.length !== elements) throw new Error(`int8 values: ${x.values.length}, the shape has ${elements}`);
  if (x.scales.length !== blocks) throw new Error(`int8 scales: ${x.scales.length}, the shape has ${blocks} blocks`);
  const dequantized = spargeDequantizeBlocksInt8(
    { values: x.values, scales: x.scales, blockSize: s.blockSize },
    s.batch,
    s.heads,
    s.seqlen,
    s.headDim,
  );
  return Float32Array.from(dequantized);
}
