// The case runner the forward attention GPU specs share (sm_90a and sm_80 kernels alike): builds
// the launch problem and the fp32 CPU reference of a case, runs one kernel over it, and checks
// every O element and every LSE row. Harness code for *.gpu.spec.ts (@tilekit/fmha-launch/testing).
import assert from 'node:assert/strict';
import {
  attentionFwdToleranceFor,
  attentionLseIndex,
  attentionRowOffset,
  causalBottomRight,
  causalTopLeft,
  makeGenericAttentionMask,
  noMask,
  packedAttentionStrides,
  referenceAttentionFwd,
  slidingWindowMask,
  type AttentionFwdArgs,
  type AttentionFwdResult,
  type AttentionFwdTolerance,
  type AttentionLayout,
  type AttentionMaskSpec,
  type FmhaFwdLaunchProblem,
  attentionScoreSetup,
} from '@tilekit/fmha';
import { randomBits16 } from '@tilekit/host';
import { decodeArray } from '@tilekit/numeric';
import { Device } from '@tilekit/runtime';
import type { FmhaFwdBuffers } from '../fwd/fmhaFwdBuffers.ts';

/** The cap of the soft-capping cases: small enough that tanh bends typical scores. */
export const GPU_CASE_SOFTCAP = 1.5;

/** One forward attention case, with packed Q/K/V/O in `layout`. */
export interface FmhaFwdGpuCase {
  /** The test's name. */
  readonly label: string;
  readonly dtype: 'fp16' | 'bf16';
  readonly d: number;
  /** Head dim of V and O; default `d`. */
  readonly dv?: number;
  readonly batch: number;
  readonly h: number;
  /** Key/value heads (GQA); default `h`. */
  readonly hk?: number;
  /** Batch mode: one length each; group mode: per-batch lengths. */
  readonly sq: number | readonly number[];
  readonly sk: number | readonly number[];
  readonly layout: AttentionLayout;
  readonly mask: AttentionMaskSpec;
  /** Whether the kernel writes LSE (then checked); default true. */
  readonly lse?: boolean;
  /** A NaN written into Q (query row) or K (key row) of batch 0, (key/value) head 0, dim 0. */
  readonly poison?: FmhaFwdPoison;
  /** A score modifier (`attentionScoreSetup`): the kernel must be built with it. */
  readonly score?: 'softcap' | 'alibi';
}

/**
 * Where a case plants a NaN. The documented behaviour: the kernel finishes (never hangs), every O
 * element and the LSE of each row that reads the NaN (the poisoned query row; every row of the
 * heads sharing the poisoned key's head that sees that key) is non-finite, and every other row is
 * exact as usual.
 */
export interface FmhaFwdPoison {
  readonly tensor: 'q' | 'k';
  readonly row: number;
}

/** The rows (batch b, query head h, row r) that read a poisoned element of case `c`. */
function poisonedRows(c: FmhaFwdGpuCase, args: AttentionFwdArgs): ((b: number, h: number, r: number) => boolean) | undefined {
  const p = c.poison;
  if (p === undefined) return undefined;
  if (p.tensor === 'q') return (b, h, r) => b === 0 && h === 0 && r === p.row;
  const group = c.h / (c.hk ?? c.h);
  const sq = Array.isArray(c.sq) ? (c.sq as readonly number[])[0]! : (c.sq as number);
  const sk = Array.isArray(c.sk) ? (c.sk as readonly number[])[0]! : (c.sk as number);
  const mask = makeGenericAttentionMask(args.mask ?? noMask, sq, sk);
  return (b, h, r) => {
    if (b !== 0 || Math.floor(h / group) !== 0) return false;
    const [lo, hi] = mask.keyRangeOfRow(r);
    return p.row >= lo && p.row < hi;
  };
}

/** Writes a NaN (the dtype's quiet NaN bits) into batch 0, head 0, `row`, dim 0 of a packed operand. */
function plantNaN(bits: Uint16Array, dtype: 'fp16' | 'bf16', strides: { row: number }, row: number): void {
  bits[row * strides.row] = dtype === 'fp16' ? 0x7e00 : 0x7fc0;
}

/**
 * The cases every forward kernel family runs (sm_90a and sm_80 alike), all d 128: ragged lengths,
 * causal masks of both alignments (one fully masking the first rows), a sliding window, GQA, varlen
 * with an empty query sequence, both layouts.
 */
export const fmhaFwdCommonGpuCases: readonly FmhaFwdGpuCase[] = [
  { label: 'fp16 d128 no mask, b2 h2 s259, bhsd', dtype: 'fp16', d: 128, batch: 2, h: 2, sq: 259, sk: 259, layout: 'bhsd', mask: noMask },
  {
    label: 'fp16 d128 causal top-left, s1000, bshd',
    dtype: 'fp16',
    d: 128,
    batch: 1,
    h: 2,
    sq: 1000,
    sk: 1000,
    layout: 'bshd',
    mask: causalTopLeft,
  },
  {
    label: 'bf16 d128 causal bottom-right sq259 < sk1000 (GQA 4:2)',
    dtype: 'bf16',
    d: 128,
    batch: 2,
    h: 4,
    hk: 2,
    sq: 259,
    sk: 1000,
    layout: 'bhsd',
    mask: causalBottomRight,
  },
  {
    label: 'fp16 d128 causal bottom-right sq259 > sk100: the first 159 rows fully masked',
    dtype: 'fp16',
    d: 128,
    batch: 1,
    h: 2,
    sq: 259,
    sk: 100,
    layout: 'bhsd',
    mask: causalBottomRight,
  },
  {
    label: 'fp16 d128 sliding window t:17,5 s127',
    dtype: 'fp16',
    d: 128,
    batch: 1,
    h: 2,
    sq: 127,
    sk: 127,
    layout: 'bshd',
    mask: slidingWindowMask(17, 5),
  },
  {
    label: 'bf16 d128 varlen q 1,17,0,127,259 k 17,1,5,127,300, bshd, GQA 4:1',
    dtype: 'bf16',
    d: 128,
    batch: 5,
    h: 4,
    hk: 1,
    sq: [1, 17, 0, 127, 259],
    sk: [17, 1, 5, 127, 300],
    layout: 'bshd',
    mask: noMask,
  },
];

/** A built kernel as the runner sees it: a name for messages and one launch (synchronous or queued; the runner reads back after it). */
export interface FmhaFwdGpuKernel {
  readonly name: string;
  launch(problem: FmhaFwdLaunchProblem, buffers: FmhaFwdBuffers, device: Device): void;
}

/** What `checkFmhaFwdOutputs` found: elements outside the tolerance (and the first), the worst errors. */
export interface FmhaFwdOutputCheck {
  readonly bad: number;
  readonly first: string;
  /** Largest |O − reference| (Infinity when an O element is NaN). */
  readonly worstO: number;
  /** Largest |LSE − reference| over the rows that see a key (0 when LSE is not given). */
  readonly worstL: number;
  readonly tol: AttentionFwdTolerance;
}

/**
 * Compares a kernel's O (decoded values, laid out in `args.oStrides`) and, when given, its LSE
 * (`attentionLseIndex` order) with `ref = referenceAttentionFwd(args)` within
 * `attentionFwdToleranceFor(args)`: every element of every row of every (batch, head); elements
 * between rows are not read. A fully masked row (reference LSE −∞) must give LSE −∞; NaN never passes.
 */
export function checkFmhaFwdOutputs(
  args: AttentionFwdArgs,
  ref: AttentionFwdResult,
  got: { readonly o: ArrayLike<number>; readonly lse?: ArrayLike<number> },
  poisoned?: (b: number, h: number, r: number) => boolean,
): FmhaFwdOutputCheck {
  const a = ref.args;
  const tol = attentionFwdToleranceFor(args);
  let worstO = 0;
  let worstL = 0;
  let bad = 0;
  let first = '';
  for (let b = 0; b < a.batch; b++) {
    for (let h = 0; h < a.nheadQ; h++) {
      for (let r = 0; r < a.seqlensQ[b]!; r++) {
        const base = attentionRowOffset(a, a.oStrides, a.rowStartsQ, b, h, r);
        if (poisoned?.(b, h, r)) {
          const finite = Array.from({ length: a.hdimV }, (_, j) => got.o[base + j]!).filter(Number.isFinite).length;
          const lseFinite = got.lse !== undefined && Number.isFinite(got.lse[attentionLseIndex(a, b, h, r)]!);
          if (finite > 0 || lseFinite) {
            bad++;
            first ||= `row b${b} h${h} r${r} reads a NaN but ${finite} O elements${lseFinite ? ' and its LSE' : ''} are finite`;
          }
          continue;
        }
        for (let j = 0; j < a.hdimV; j++) {
          const value = got.o[base + j]!;
          const want = ref.o[base + j]!;
          const err = Math.abs(value - want);
          const lim = tol.o.atol + tol.o.rtol * Math.abs(want);
          worstO = Math.max(worstO, Number.isNaN(err) ? Infinity : err);
          if (!(err <= lim)) {
            bad++;
            first ||= `O[b${b} h${h} r${r} d${j}] = ${value}, reference ${want} (|err| ${err.toExponential(2)} > ${lim.toExponential(2)})`;
          }
        }
        if (got.lse === undefined) continue;
        const li = attentionLseIndex(a, b, h, r);
        const gotL = got.lse[li]!;
        const wantL = ref.lse[li]!;
        const okL = wantL === -Infinity ? gotL === -Infinity : Math.abs(gotL - wantL) <= tol.lse.atol + tol.lse.rtol * Math.abs(wantL);
        if (wantL !== -Infinity) worstL = Math.max(worstL, Math.abs(gotL - wantL));
        if (!okL) {
          bad++;
          first ||= `LSE[b${b} h${h} r${r}] = ${gotL}, reference ${wantL}`;
        }
      }
    }
  }
  return { bad, first, worstO, worstL, tol };
}

/** Prefix sums of sequence lengths: the seqstart array of group mode. */
function starts(lens: readonly number[]): number[] {
  const s = [0];
  for (const l of lens) s.push(s[s.length - 1]! + l);
  return s;
}

/**
 * Runs case `c` through `kernel` on device 0 and checks it with `checkFmhaFwdOutputs` (Q/K/V
 * seeded uniform in [−1, 1), rounded to the dtype). O and LSE start as 0xff bytes (NaN), so a row
 * the kernel skips fails. Asserts that no element is off (the message names the first one) and
 * returns a summary line with the worst errors.
 */
export async function runFmhaFwdGpuCase(c: FmhaFwdGpuCase, kernel: FmhaFwdGpuKernel): Promise<string> {
  const dv = c.dv ?? c.d;
  const hk = c.hk ?? c.h;
  const withLse = c.lse ?? true;
  const group = Array.isArray(c.sq);
  const sqs = group ? (c.sq as readonly number[]) : Array<number>(c.batch).fill(c.sq as number);
  const sks = group ? (c.sk as readonly number[]) : Array<number>(c.batch).fill(c.sk as number);
  const rowsQ = group ? sqs.reduce((a, b) => a + b, 0) : sqs[0]!;
  const rowsK = group ? sks.reduce((a, b) => a + b, 0) : sks[0]!;
  const batches = group ? 1 : c.batch;
  const qs = packedAttentionStrides(c.layout, c.h, rowsQ, c.d);
  const ks = packedAttentionStrides(c.layout, hk, rowsK, c.d);
  const vs = packedAttentionStrides(c.layout, hk, rowsK, dv);
  const os = packedAttentionStrides(c.layout, c.h, rowsQ, dv);
  const q = randomBits16(c.dtype, batches * c.h * rowsQ * c.d, 1 + rowsQ);
  const k = randomBits16(c.dtype, batches * hk * rowsK * c.d, 2 + rowsK);
  const v = randomBits16(c.dtype, batches * hk * rowsK * dv, 3 + rowsK);
  const score = attentionScoreSetup(c.score, c.h, GPU_CASE_SOFTCAP);
  if (c.poison) plantNaN(c.poison.tensor === 'q' ? q : k, c.dtype, c.poison.tensor === 'q' ? qs : ks, c.poison.row);
  const args: AttentionFwdArgs = {
    batch: c.batch,
    nheadQ: c.h,
    nheadK: hk,
    hdimQ: c.d,
    hdimV: dv,
    ...(group ? { seqstartQ: starts(sqs), seqstartK: starts(sks) } : { seqlenQ: rowsQ, seqlenK: rowsK }),
    q: { dtype: c.dtype, data: q, strides: qs },
    k: { dtype: c.dtype, data: k, strides: ks },
    v: { dtype: c.dtype, data: v, strides: vs },
    oStrides: os,
    mask: c.mask,
    ...(score ? { scoreModifier: score.reference } : {}),
  };
  const ref = referenceAttentionFwd(args);
  const problem: FmhaFwdLaunchProblem = {
    dtype: c.dtype,
    mode: group ? 'group' : 'batch',
    batch: c.batch,
    nheadQ: c.h,
    nheadK: hk,
    hdimQ: c.d,
    hdimV: dv,
    seqlenQ: Math.max(...sqs),
    seqlenK: Math.max(...sks),
    rowsQ,
    rowsK,
    qStrides: qs,
    kStrides: ks,
    vStrides: vs,
    oStrides: os,
    lse: withLse,
    lseStrides: group ? { batch: 0, head: rowsQ } : { batch: c.h * rowsQ, head: rowsQ },
    scale: ref.args.scale,
    mask: c.mask,
    numSplits: 1,
    ...(c.score ? { scoreModifier: c.score } : {}),
  };
  const device = Device.open(0);
  const dq = device.upload(q);
  const dk = device.upload(k);
  const dvb = device.upload(v);
  const oCount = batches * c.h * rowsQ * dv;
  const lseCount = batches * c.h * rowsQ;
  const dout = device.alloc(Math.max(1, oCount) * 2).fill(0xff);
  const dlse = withLse ? device.alloc(Math.max(1, lseCount) * 4).fill(0xff) : undefined;
  const dsq = group ? device.upload(new Int32Array(starts(sqs))) : undefined;
  const dsk = group ? device.upload(new Int32Array(starts(sks))) : undefined;
  const slopes = score?.slopes ? device.upload(score.slopes) : undefined;
  try {
    const seqBuffers = dsq && dsk ? { seqstartQ: dsq, seqstartK: dsk } : {};
    const scoreBuffers = score ? { scoreModifier: score.kernel(slopes?.ptr) } : {};
    kernel.launch(problem, { q: dq, k: dk, v: dvb, o: dout, ...(dlse ? { lse: dlse } : {}), ...seqBuffers, ...scoreBuffers }, device);
    const o = decodeArray(c.dtype, new Uint16Array(dout.copyToHost().buffer));
    const lse = dlse ? new Float32Array(dlse.copyToHost().buffer) : undefined;
    const found = checkFmhaFwdOutputs(args, ref, { o, ...(lse ? { lse } : {}) }, poisonedRows(c, args));
    assert.equal(found.bad, 0, `${kernel.name}: ${found.bad} elements off; first: ${found.first}`);
    const lseText = lse ? `, LSE ${found.worstL.toExponential(2)}` : ', no LSE';
    return `${kernel.name}: max |err| O ${found.worstO.toExponential(2)} (atol ${found.tol.o.atol.toExponential(2)})${lseText}`;
  } finally {
    for (const buf of [dq, dk, dvb, dout, dlse, dsq, dsk, slopes]) buf?.dispose();
  }
}
