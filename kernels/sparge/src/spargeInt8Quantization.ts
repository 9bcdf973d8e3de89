import { SpargeArgumentError } from './spargeArgumentError.ts';
import { spargeKeyMean } from './spargeBlockMapReference.ts';
import { checkSpargeValues, resolveSpargeShape, spargeBlockCount, type SpargeShape, type SpargeValues } from './spargeShape.ts';

/** One tensor quantized per block: int8 values (same layout as the input) and one fp32 scale per (b, h, block). */
export interface SpargeInt8Blocks {
  readonly values: Int8Array;
  /** [b][h][blocks]: value ≈ int8 · scale. */
  readonly scales: Float32Array;
  readonly blockSize: number;
}

/** Q and K quantized as upstream's fused pool/quant kernel does: Q raw per query block, K − km per key block. */
export interface SpargeInt8Qk {
  readonly q: SpargeInt8Blocks;
  readonly k: SpargeInt8Blocks;
  /** [b][hk][d]: the K mean subtracted before quantizing (zeros without smoothing). */
  readonly keyMean: Float64Array;
}

/**
 * Upstream's per-block int8 quantization (utils.py fused kernel, SageAttention's kPerBlock), in fp32
 * like the Triton code: per (b, h, block) of `blockSize` rows (the tail block over its real rows),
 * scale = fp32(max|x| / 127) + 1e-7 (fp32) and q = trunc(x/scale + ½·sign(x/scale)), round half away
 * from zero, x = value − mean[(b·heads + h)·d + c] when `mean` is given. No softmax scale is folded in.
 * Postcondition (property-tested): |q·scale − x| ≤ scale/2 (plus fp32 rounding) and |q| ≤ 127.
 * @throws SpargeArgumentError for bad sizes.
 */
export function spargeQuantizeBlocksInt8(
  values: SpargeValues,
  batch: number,
  heads: number,
  seqlen: number,
  headDim: number,
  blockSize: number,
  mean: Float64Array | null = null,
): SpargeInt8Blocks {
  checkSpargeValues('values', values, batch, heads, seqlen, headDim);
  if (!Number.isSafeInteger(blockSize) || blockSize < 1) throw new SpargeArgumentError('blockSize', 'must be an integer ≥ 1', blockSize);
  if (mean !== null && mean.length !== batch * heads * headDim)
    throw new SpargeArgumentError('mean', `must hold batch·heads·headDim = ${batch * heads * headDim} entries`, mean.length);
  const blocks = spargeBlockCount(seqlen, blockSize);
  const out = new Int8Array(values.length);
  const scales = new Float32Array(batch * heads * blocks);
  const f = Math.fround;
  for (let bh = 0; bh < batch * heads; bh++) {
    const x = (n: number, c: number): number => f(values[(bh * seqlen + n) * headDim + c]! - (mean === null ? 0 : mean[bh * headDim + c]!));
    for (let blk = 0; blk < blocks; blk++) {
      const first = blk * blockSize;
      const last = Math.min(seqlen, first + blockSize);
      let amax = 0;
      for (let n = first; n < last; n++) for (let c = 0; c < headDim; c++) amax = Math.max(amax, Math.abs(x(n, c)));
      const scale = f(f(amax / 127) + f(1e-7));
      scales[bh * blocks + blk] = scale;
      for (let n = first; n < last; n++) {
        for (let c = 0; c < headDim; c++) {
          const y = f(x(n, c) / scale);
          out[(bh * seqlen + n) * headDim + c] = Math.trunc(f(y + 0.5 * Math.sign(y)));
        }
      }
    }
  }
  return { values: out, scales, blockSize };
}

/** value ≈ q·scale of every element (float64), the inverse map of `spargeQuantizeBlocksInt8` up to rounding. */
export function spargeDequantizeBlocksInt8(
  blocks: SpargeInt8Blocks,
  batch: number,
  heads: number,
  seqlen: number,
  headDim: number,
): Float64Array {
  const n = spargeBlockCount(seqlen, blocks.blockSize);
  const out = new Float64Array(blocks.values.length);
  for (let bh = 0; bh < batch * heads; bh++) {
    for (let r = 0; r < seqlen; r++) {
      const scale = blocks.scales[bh * n + Math.floor(r / blocks.blockSize)]!;
      for (let c = 0; c < headDim; c++) out[(bh * seqlen + r) * headDim + c] = blocks.values[(bh * seqlen + r) * headDim + c]! * scale;
    }
  }
  return out;
}

/**
 * Q per query block and K − km (K smoothing when `smoothK`) per key block, int8 with per-block scales:
 * what upstream's fused pool/quant kernel feeds the int8 Q·Kᵀ. Smoothing K does not change the
 * softmax (q·km is constant per row) but shrinks K's quantization error.
 */
export function spargeQuantizeQkInt8(
  shape: SpargeShape,
  q: SpargeValues,
  k: SpargeValues,
  blockQ: number,
  blockK: number,
  smoothK: boolean,
): SpargeInt8Qk {
  const s = resolveSpargeShape(shape);
  checkSpargeValues('q', q, s.batch, s.nhead, s.seqlenQ, s.headDim);
  checkSpargeValues('k', k, s.batch, s.nheadK, s.seqlenK, s.headDim);
  const keyMean = smoothK ? spargeKeyMean(k, s.batch, s.nheadK, s.seqlenK, s.headDim) : new Float64Array(s.batch * s.nheadK * s.headDim);
  return {
    q: spargeQuantizeBlocksInt8(q, s.batch, s.nhead, s.seqlenQ, s.headDim, blockQ),
    k: spargeQuantizeBlocksInt8(k, s.batch, s.nheadK, s.seqlenK, s.headDim, blockK, smoothK ? keyMean : null),
    keyMean,
  };
}
