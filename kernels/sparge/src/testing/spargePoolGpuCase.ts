// Test inputs and CPU expectations of the block-map pooling stage for the GPU spec: random fp16/bf16
// Q and K in any strided layout (batch or group mode), and the CPU references (`spargeKeyMean`,
// `spargePoolBlocks`, `spargeQuantizeBlocksInt8`) evaluated per sequence on the decoded values.
import { decode, encode } from '@tilekit/numeric';
import { spargeKeyMean, spargePoolBlocks } from '../spargeBlockMapReference.ts';
import { spargeQuantizeBlocksInt8 } from '../spargeInt8Quantization.ts';
import type { CheckedSpargePoolProblem, SpargePoolStrides } from '../blockMap/spargePoolProblem.ts';
import { spargeRandomValues } from './spargeRandomValues.ts';

/** A strided fp16/bf16 tensor: its storage bits and, per (sequence, head), the decoded packed rows. */
export interface SpargePoolTensorCase {
  readonly bits: Uint16Array;
  /** [sequence][head] → Float64Array of seqlen·d decoded values (row-major). */
  readonly sequences: readonly (readonly Float64Array[])[];
}

/** Rows [start, start + len) of sequence b: batch mode b's own rows, group mode the seqstart slot. */
function seqRange(
  p: CheckedSpargePoolProblem,
  which: 'q' | 'k',
  b: number,
): { readonly start: number; readonly len: number; readonly batch: number } {
  const starts = which === 'q' ? p.seqstartQ : p.seqstartK;
  if (starts !== null) return { start: starts[b]!, len: starts[b + 1]! - starts[b]!, batch: 0 };
  return { start: 0, len: which === 'q' ? p.seqlenQ : p.seqlenK, batch: b };
}

/** Random values (uniform in [−amplitude, amplitude) plus `offset`, rounded to the dtype) in the problem's layout. */
export function spargePoolTensor(p: CheckedSpargePoolProblem, which: 'q' | 'k', seed: number, offset = 0): SpargePoolTensorCase {
  const s: SpargePoolStrides = which === 'q' ? p.qStrides : p.kStrides;
  const heads = which === 'q' ? p.nhead : p.nheadK;
  const rows = which === 'q' ? p.rowsQ : p.rowsK;
  const d = p.headDim;
  const span = rows === 0 ? 1 : (p.batches - 1) * s.batch + (heads - 1) * s.head + (rows - 1) * s.row + d;
  const bits = new Uint16Array(span);
  const values = spargeRandomValues(span, seed);
  for (let i = 0; i < span; i++) bits[i] = encode(p.dtype, values[i]! + offset);
  const sequences = Array.from({ length: p.batch }, (_, b) => {
    const r = seqRange(p, which, b);
    return Array.from({ length: heads }, (_, h) => {
      const out = new Float64Array(r.len * d);
      for (let n = 0; n < r.len; n++)
        for (let c = 0; c < d; c++) out[n * d + c] = decode(p.dtype, bits[r.batch * s.batch + h * s.head + (r.start + n) * s.row + c]!);
      return out;
    });
  });
  return { bits, sequences };
}

/** The CPU expectation of one (sequence, head): pooled [blocksMax][d], sim [blocksMax] (padded blocks 0), int8 rows and scales. */
export interface SpargePoolExpected {
  readonly pooled: Float64Array;
  readonly sim: Float64Array;
  readonly values: Int8Array;
  readonly scales: Float32Array;
  /** fp32 y = x/scale of every element (to tell a rounding tie from a real mismatch). */
  readonly quotients: Float32Array;
}

/**
 * The references for one (sequence, head) of `values` (seqlen·d), blocks of `blockRows`, padded to
 * `blocksMax`: `mean` (length d, or null) is subtracted — pass the GPU's fp32 km to check the int8
 * path bit for bit.
 */
export function spargePoolExpected(
  values: Float64Array,
  headDim: number,
  blockRows: number,
  blocksMax: number,
  mean: Float64Array | null,
  tailBlockRule: 'pooled' | 'upstreamFix',
): SpargePoolExpected {
  const seqlen = values.length / headDim;
  const pooled = new Float64Array(blocksMax * headDim);
  const sim = new Float64Array(blocksMax);
  if (seqlen === 0) return { pooled, sim, values: new Int8Array(0), scales: new Float32Array(0), quotients: new Float32Array(0) };
  const p = spargePoolBlocks(values, 0, seqlen, headDim, blockRows, mean, 0, tailBlockRule);
  pooled.set(p.pooled);
  sim.set(p.similarity);
  const q = spargeQuantizeBlocksInt8(values, 1, 1, seqlen, headDim, blockRows, mean);
  const quotients = new Float32Array(values.length);
  for (let n = 0; n < seqlen; n++) {
    const scale = q.scales[Math.floor(n / blockRows)]!;
    for (let c = 0; c < headDim; c++)
      quotients[n * headDim + c] = Math.fround(Math.fround(values[n * headDim + c]! - (mean === null ? 0 : mean[c]!)) / scale);
  }
  return { pooled, sim, values: q.values, scales: q.scales, quotients };
}

/** The K mean of one (sequence, head) in float64 (zeros for an empty sequence). */
export function spargePoolKeyMean(values: Float64Array, headDim: number): Float64Array {
  const n = values.length / headDim;
  return n === 0 ? new Float64Array(headDim) : spargeKeyMean(values, 1, 1, n, headDim);
}
