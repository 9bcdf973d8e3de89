// The case runner of the sparse attention GPU specs: builds a block map (random, or given), the
// launch problem and the float64 CPU reference (per sequence, so group mode is covered), runs one
// sparse attention kernel and checks every O element and LSE row. Harness code for *.gpu.spec.ts.
import assert from 'node:assert/strict';
import { attentionFwdTolerance, causalTopLeft, noMask, checkFmhaFwdProblem } from '@tilekit/fmha';
import { Prng, randomBits16 } from '@tilekit/host';
import { decodeArray, encodeArray } from '@tilekit/numeric';
import { Device, encodeTensorMapTiled } from '@tilekit/runtime';
import type { SpargeFwdKernel, SpargePvModeName } from '../attention/spargeFwdLauncher.ts';
import type { SpargePipeline } from '../attention/spargeFwdInstance.ts';
import { encodeSpargeLut, type SpargeBlockMap } from '../spargeLut.ts';
import { spargeMaskedAttentionReference, spargePvSkipAttentionReference, type SpargeAttentionResult } from '../spargeReference.ts';
import { spargeSyntheticInputs } from '../spargeSyntheticInputs.ts';
import { spargeDequantizeBlocksInt8, spargeQuantizeQkInt8 } from '../spargeInt8Quantization.ts';

/** One sparse attention case (Q/K/V/O packed bhsd; group mode holds every sequence's rows in one "batch"). */
export interface SpargeFwdGpuCase {
  readonly label: string;
  readonly dtype: 'fp16' | 'bf16';
  readonly d: 64 | 128;
  readonly batch: number;
  readonly h: number;
  readonly hk?: number;
  /** Batch mode: one length (self-attention, sq = sk); group mode: per-batch lengths. */
  readonly s: number | readonly number[];
  readonly causal: boolean;
  readonly pipeline: SpargePipeline;
  readonly pvMode: SpargePvModeName;
  /** Per head or one for all (log2 units; Infinity never skips). */
  readonly pvThreshold: number | readonly number[];
  /** Fraction of (query block, key block) pairs visited (random, seeded); 1 = every block. */
  readonly density: number;
  /** Query block rows of (b 0, h 0) left with no block at all (O = 0, LSE = −∞). */
  readonly emptyRows?: readonly number[];
  /** Structured inputs with locality (spargeSyntheticInputs; batch mode, hk = h) instead of uniform values. */
  readonly synthetic?: boolean;
  /** int8 Q·Kᵀ (batch mode): Q and K − km quantized per block on the CPU (spargeQuantizeQkInt8); the reference uses the dequantized values. */
  readonly int8?: boolean;
}

/** What one run found: the summary line and the kernel's P·V tile counts. */
export interface SpargeFwdGpuResult {
  readonly summary: string;
  readonly computed: number;
  readonly skipped: number;
  /** The CPU model's skipped (visited block, query row) pairs, for comparison. */
  readonly modelSkippedRows: number;
}

function starts(lens: readonly number[]): number[] {
  const s = [0];
  for (const l of lens) s.push(s[s.length - 1]! + l);
  return s;
}

/**
 * Runs case `c` through `kernel` (blockQ × blockK = the kernel's tiles) on device 0 and checks it
 * against `spargeMaskedAttentionReference` (pvMode none or pvThreshold +∞ everywhere) or
 * `spargePvSkipAttentionReference` (warp: 16-row groups, block: the whole query block). With a finite
 * threshold the GPU's fp32 vote may differ from the model's float64 one only for a group whose skipped
 * weights are ≤ 2^−threshold of its row maxima, so the O tolerance grows by 2^−threshold · max|v| per
 * visited tile. O and LSE start as NaN bytes, so a row the kernel skips fails.
 */
export async function runSpargeFwdGpuCase(c: SpargeFwdGpuCase, kernel: SpargeFwdKernel): Promise<SpargeFwdGpuResult> {
  const { blockQ, blockK } = kernel.instance;
  const hk = c.hk ?? c.h;
  const group = Array.isArray(c.s);
  const lens = group ? (c.s as readonly number[]) : Array<number>(c.batch).fill(c.s as number);
  const rows = group ? lens.reduce((a, b) => a + b, 0) : lens[0]!;
  const batches = group ? 1 : c.batch;
  const d = c.d;
  // Values as stored (16-bit codes) and decoded.
  let qBits: Uint16Array;
  let kBits: Uint16Array;
  let vBits: Uint16Array;
  if (c.synthetic === true) {
    const syn = spargeSyntheticInputs(
      { batch: c.batch, nhead: c.h, seqlenQ: rows, seqlenK: rows, headDim: d },
      { seed: 7, roundTo: c.dtype },
    );
    qBits = encodeArray(c.dtype, syn.q);
    kBits = encodeArray(c.dtype, syn.k);
    vBits = encodeArray(c.dtype, syn.v);
  } else {
    qBits = randomBits16(c.dtype, batches * c.h * rows * d, 11 + rows);
    kBits = randomBits16(c.dtype, batches * hk * rows * d, 12 + rows);
    vBits = randomBits16(c.dtype, batches * hk * rows * d, 13 + rows);
  }
  let q: Float32Array | Float64Array = decodeArray(c.dtype, qBits);
  let k: Float32Array | Float64Array = decodeArray(c.dtype, kBits);
  const quantized =
    c.int8 === true
      ? spargeQuantizeQkInt8(
          { batch: c.batch, nhead: c.h, nheadK: hk, seqlenQ: rows, seqlenK: rows, headDim: d },
          q,
          k,
          blockQ,
          blockK,
          true,
        )
      : undefined;
  if (quantized !== undefined) {
    q = spargeDequantizeBlocksInt8(quantized.q, c.batch, c.h, rows, d);
    k = spargeDequantizeBlocksInt8(quantized.k, c.batch, hk, rows, d);
  }
  const v = decodeArray(c.dtype, vBits);
  // The block map on the padded grid: per sequence its own blocks, the rest zero.
  const qBlocks = Math.max(1, Math.ceil(Math.max(...lens) / blockQ));
  const kBlocks = Math.max(1, Math.ceil(Math.max(...lens) / blockK));
  const map = new Uint8Array(c.batch * c.h * qBlocks * kBlocks);
  const rng = new Prng(5 + rows);
  for (let b = 0; b < c.batch; b++) {
    for (let h = 0; h < c.h; h++) {
      for (let i = 0; i < Math.ceil(lens[b]! / blockQ); i++) {
        if (b === 0 && h === 0 && c.emptyRows?.includes(i)) continue;
        for (let j = 0; j < Math.ceil(lens[b]! / blockK); j++)
          map[((b * c.h + h) * qBlocks + i) * kBlocks + j] = c.density >= 1 || rng.nextRange(0, 1) < c.density ? 1 : 0;
      }
    }
  }
  const blockMap: SpargeBlockMap = { batch: c.batch, nhead: c.h, qBlocks, kBlocks, map };
  const lut = encodeSpargeLut(blockMap);
  const thresholds = typeof c.pvThreshold === 'number' ? Array<number>(c.h).fill(c.pvThreshold) : [...c.pvThreshold];
  const modeled = c.pvMode !== 'none' && thresholds.some((t) => t !== Infinity);
  const scale = Math.fround(1 / Math.sqrt(d));
  // The reference per sequence (batch 1), gathered into the kernel's layout.
  const oRef = new Float64Array(batches * c.h * rows * d);
  const lseRef = new Float64Array(batches * c.h * rows);
  let modelSkippedRows = 0;
  const rowStart = starts(lens);
  for (let b = 0; b < c.batch; b++) {
    const n = lens[b]!;
    if (n === 0) continue;
    const slice = (x: Float32Array | Float64Array, heads: number): Float64Array => {
      const out = new Float64Array(heads * n * d);
      for (let h = 0; h < heads; h++) {
        const src = group ? (h * rows + rowStart[b]!) * d : (b * heads + h) * rows * d;
        out.set(x.subarray(src, src + n * d), h * n * d);
      }
      return out;
    };
    const qB = Math.ceil(n / blockQ);
    const kB = Math.ceil(n / blockK);
    const sub = new Uint8Array(c.h * qB * kB);
    for (let h = 0; h < c.h; h++)
      for (let i = 0; i < qB; i++)
        for (let j = 0; j < kB; j++) sub[(h * qB + i) * kB + j] = map[((b * c.h + h) * qBlocks + i) * kBlocks + j]!;
    const args = {
      shape: { batch: 1, nhead: c.h, nheadK: hk, seqlenQ: n, seqlenK: n, headDim: d },
      q: slice(q, c.h),
      k: slice(k, hk),
      v: slice(v, hk),
      blockQ,
      blockK,
      blocks: { batch: 1, nhead: c.h, qBlocks: qB, kBlocks: kB, map: sub },
      isCausal: c.causal,
      scale,
    };
    let ref: SpargeAttentionResult;
    if (modeled) {
      const r = spargePvSkipAttentionReference({ ...args, pvMode: c.pvMode, pvThreshold: thresholds, warpRows: 16, alwaysComputedTail: 1 });
      modelSkippedRows += r.pvSkippedRows;
      ref = r;
    } else ref = spargeMaskedAttentionReference(args);
    for (let h = 0; h < c.h; h++) {
      const dst = group ? h * rows + rowStart[b]! : (b * c.h + h) * rows;
      oRef.set(ref.o.subarray(h * n * d, (h + 1) * n * d), dst * d);
      lseRef.set(ref.lse.subarray(h * n, (h + 1) * n), dst);
    }
  }
  const problem = checkFmhaFwdProblem({
    dtype: c.dtype,
    batch: c.batch,
    nheadQ: c.h,
    nheadK: hk,
    hdimQ: d,
    ...(group ? { seqstartQ: rowStart, seqstartK: rowStart } : { seqlenQ: rows, seqlenK: rows }),
    mask: c.causal ? causalTopLeft : noMask,
    lse: true,
    scale,
  });
  const device = Device.open(0);
  const bufs = {
    q: device.upload(qBits),
    k: device.upload(kBits),
    v: device.upload(vBits),
    o: device.alloc(oRef.length * 2).fill(0xff),
    lse: device.alloc(lseRef.length * 4).fill(0xff),
    lut: device.upload(lut.lut),
    validBlockNum: device.upload(lut.validBlockNum),
    blockMap: device.upload(map),
    pvThreshold: device.upload(new Float32Array(thresholds)),
    pvStats: device.alloc(16).fill(0),
    ...(quantized !== undefined
      ? {
          q8: device.upload(quantized.q.values),
          k8: device.upload(quantized.k.values),
          qScale: device.upload(quantized.q.scales),
          kScale: device.upload(quantized.k.scales),
        }
      : {}),
    ...(group ? { seqstartQ: device.upload(new Int32Array(rowStart)), seqstartK: device.upload(new Int32Array(rowStart)) } : {}),
  };
  try {
    kernel
      .prepare({ ...problem, pipeline: c.pipeline, pvMode: c.pvMode, qBlocks, kBlocks }, bufs, (o) => encodeTensorMapTiled(device, o))
      .launch();
    const o = decodeArray(c.dtype, new Uint16Array(bufs.o.copyToHost().buffer));
    const lse = new Float32Array(bufs.lse.copyToHost().buffer);
    const stats = new BigUint64Array(bufs.pvStats.copyToHost().buffer);
    const maxAbs = (x: ArrayLike<number>): number => {
      let m = 0;
      for (let i = 0; i < x.length; i++) m = Math.max(m, Math.abs(x[i]!));
      return m;
    };
    const tol = attentionFwdTolerance({
      dtype: c.dtype,
      seqlenK: Math.max(...lens),
      hdimQ: d,
      scale,
      maxAbsQ: maxAbs(q),
      maxAbsK: maxAbs(k),
      maxAbsV: maxAbs(v),
    });
    const skipSlack = modeled ? Math.max(...thresholds.map((t) => 2 ** -t)) * maxAbs(v) * kBlocks : 0;
    let bad = 0;
    let first = '';
    let worstO = 0;
    let worstL = 0;
    for (let r = 0; r < lseRef.length; r++) {
      const wantL = lseRef[r]!;
      const gotL = lse[r]!;
      const okL =
        wantL === -Infinity
          ? gotL === -Infinity
          : Math.abs(gotL - wantL) <= tol.lse.atol + tol.lse.rtol * Math.abs(wantL) + (modeled ? skipSlack : 0);
      if (wantL !== -Infinity) worstL = Math.max(worstL, Math.abs(gotL - wantL));
      if (!okL) {
        bad++;
        first ||= `LSE[row ${r}] = ${gotL}, reference ${wantL}`;
      }
      for (let e = 0; e < d; e++) {
        const got = o[r * d + e]!;
        const want = oRef[r * d + e]!;
        const err = Math.abs(got - want);
        worstO = Math.max(worstO, Number.isNaN(err) ? Infinity : err);
        if (!(err <= tol.o.atol + tol.o.rtol * Math.abs(want) + skipSlack)) {
          bad++;
          first ||= `O[row ${r} d${e}] = ${got}, reference ${want}`;
        }
      }
    }
    assert.equal(bad, 0, `${kernel.instance.name} (${c.label}): ${bad} elements off; first: ${first}`);
    return {
      summary: `${kernel.instance.name}: max |err| O ${worstO.toExponential(2)} (atol ${tol.o.atol.toExponential(2)}), LSE ${worstL.toExponential(2)}; P·V tiles computed ${stats[0]}, skipped ${stats[1]} (model skipped ${modelSkippedRows} row-tiles)`,
      computed: Number(stats[0]),
      skipped: Number(stats[1]),
      modelSkippedRows,
    };
  } finally {
    for (const buf of Object.values(bufs)) buf.dispose();
  }
}
