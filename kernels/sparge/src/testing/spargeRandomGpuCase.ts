// The case runner of the randomized Sparge GPU spec: one problem through SpargeRunner, its block map
// against the float64 selection reference (rows may differ only within rounding of a selection margin
// or of simthreshd1, as spargeBlockMap.gpu.spec.ts judges them), and its output against the float64
// masked attention over the map the GPU predicted (the PV-skip model with a vote), within
// attentionFwdTolerance as spargeFwdGpuCase.ts (int8 Q·Kᵀ: |ΔO| ≤ 0.05, as spargeRunner.gpu.spec.ts).
// Harness code for *.gpu.spec.ts; not exported by the package.
import assert from 'node:assert/strict';
import { attentionFwdTolerance, type AttentionTensorStrides, fmhaFwdOperandElements } from '@tilekit/fmha';
import { randomBits16 } from '@tilekit/host';
import { decodeArray } from '@tilekit/numeric';
import type { DeviceBuffer } from '@tilekit/runtime';
import type { SpargeFwdLaunchProblem } from '../attention/spargeFwdLauncher.ts';
import { compareSpargeSelect, type SpargeSelectComparison } from '../blockMap/spargeSelectCompare.ts';
import { spargeSelectReference, type SpargeSelectInputs } from '../blockMap/spargeSelectReference.ts';
import { spargeBlockMapReference, type SpargeBlockMapResult } from '../spargeBlockMapReference.ts';
import { spargeMaskedAttentionReference, spargePvSkipAttentionReference, type SpargeAttentionResult } from '../spargeReference.ts';
import { planSparge, type SpargePlan, type SpargeProblem, type SpargeRunner } from '../spargeRunner.ts';

/** |ΔO| allowed with int8 Q·Kᵀ (the GPU quantizes; the reference does not), as spargeRunner.gpu.spec.ts. */
export const SPARGE_RANDOM_INT8_O_TOLERANCE = 0.05;

/** One sequence: its batch index, lengths and first rows in the tensors (0 in batch mode). */
interface Sequence {
  readonly b: number;
  readonly sq: number;
  readonly sk: number;
  readonly q0: number;
  readonly k0: number;
}

function sequencesOf(p: SpargeFwdLaunchProblem): Sequence[] {
  return Array.from({ length: p.batch }, (_, b) =>
    p.mode === 'batch'
      ? { b, sq: p.seqlenQ, sk: p.seqlenK, q0: 0, k0: 0 }
      : {
          b,
          sq: p.seqstartQ[b + 1]! - p.seqstartQ[b]!,
          sk: p.seqstartK[b + 1]! - p.seqstartK[b]!,
          q0: p.seqstartQ[b]!,
          k0: p.seqstartK[b]!,
        },
  );
}

/** Element offset of row r (from `start`) of head h of batch b in a tensor of `strides`. */
function rowOffset(p: SpargeFwdLaunchProblem, s: AttentionTensorStrides, b: number, start: number, h: number, r: number): number {
  return p.mode === 'group' ? (start + r) * s.row + h * s.head : b * s.batch + h * s.head + r * s.row;
}

/** Rows [start, start + rows) of batch b, every head, as packed [heads][rows][d] values (the references' layout). */
function gather(
  p: SpargeFwdLaunchProblem,
  values: Float64Array,
  s: AttentionTensorStrides,
  heads: number,
  b: number,
  start: number,
  rows: number,
): Float64Array {
  const d = p.hdimQ;
  const out = new Float64Array(heads * rows * d);
  for (let h = 0; h < heads; h++)
    for (let r = 0; r < rows; r++)
      out.set(values.subarray(rowOffset(p, s, b, start, h, r), rowOffset(p, s, b, start, h, r) + d), (h * rows + r) * d);
  return out;
}

/** Q, K, V as uploaded (bit patterns over their strided spans) and decoded. */
export interface SpargeRandomInputs {
  readonly bits: Readonly<Record<'q' | 'k' | 'v', Uint16Array>>;
  readonly values: Readonly<Record<'q' | 'k' | 'v', Float64Array>>;
}

/** Seeded uniform inputs in [−1, 1) rounded to the dtype, over the strided spans of Q, K, V (at least one element each). */
export function spargeRandomInputs(p: SpargeFwdLaunchProblem): SpargeRandomInputs {
  const e = fmhaFwdOperandElements(p);
  const bits = {
    q: randomBits16(p.dtype, Math.max(1, e.q), 11 + p.rowsQ),
    k: randomBits16(p.dtype, Math.max(1, e.k), 12 + p.rowsK),
    v: randomBits16(p.dtype, Math.max(1, e.v), 13 + p.rowsK),
  };
  return {
    bits,
    values: {
      q: Float64Array.from(decodeArray(p.dtype, bits.q)),
      k: Float64Array.from(decodeArray(p.dtype, bits.k)),
      v: Float64Array.from(decodeArray(p.dtype, bits.v)),
    },
  };
}

/** One sequence's inputs (packed [heads][rows][d]) and its block-map reference; undefined without queries or keys. */
interface SequenceData {
  readonly seq: Sequence;
  readonly q: Float64Array;
  readonly k: Float64Array;
  readonly v: Float64Array;
  readonly map: SpargeBlockMapResult;
}

function sequenceData(
  plan: SpargePlan,
  problem: SpargeProblem,
  values: SpargeRandomInputs['values'],
  seq: Sequence,
): SequenceData | undefined {
  const p = plan.attention;
  if (seq.sq === 0 || seq.sk === 0) return undefined;
  const q = gather(p, values.q, p.qStrides, p.nheadQ, seq.b, seq.q0, seq.sq);
  const k = gather(p, values.k, p.kStrides, p.nheadK, seq.b, seq.k0, seq.sk);
  const v = gather(p, values.v, p.vStrides, p.nheadK, seq.b, seq.k0, seq.sk);
  const shape = { batch: 1, nhead: p.nheadQ, nheadK: p.nheadK, seqlenQ: seq.sq, seqlenK: seq.sk, headDim: p.hdimQ };
  return {
    seq,
    q,
    k,
    v,
    map: spargeBlockMapReference({ shape, q, k, params: { ...problem.params, blockQ: plan.params.blockQ, blockK: plan.params.blockK } }),
  };
}

/** The pooled inputs of the selection on the padded grid, assembled from the per-sequence references (zero elsewhere). */
function pooledInputs(p: SpargeFwdLaunchProblem, data: readonly (SequenceData | undefined)[]): SpargeSelectInputs {
  const { qBlocks: QM, kBlocks: KM, hdimQ: d } = p;
  const out = {
    pooledQ: new Float64Array(p.batch * p.nheadQ * QM * d),
    simQ: new Float64Array(p.batch * p.nheadQ * QM),
    pooledK: new Float64Array(p.batch * p.nheadK * KM * d),
    simK: new Float64Array(p.batch * p.nheadK * KM),
  };
  for (const x of data) {
    if (x === undefined) continue;
    const { blockMap: g, pooledQ, similarityQ, pooledK, similarityK } = x.map;
    for (let h = 0; h < p.nheadQ; h++) {
      out.pooledQ.set(pooledQ.subarray(h * g.qBlocks * d, (h + 1) * g.qBlocks * d), (x.seq.b * p.nheadQ + h) * QM * d);
      out.simQ.set(similarityQ.subarray(h * g.qBlocks, (h + 1) * g.qBlocks), (x.seq.b * p.nheadQ + h) * QM);
    }
    for (let h = 0; h < p.nheadK; h++) {
      out.pooledK.set(pooledK.subarray(h * g.kBlocks * d, (h + 1) * g.kBlocks * d), (x.seq.b * p.nheadK + h) * KM * d);
      out.simK.set(similarityK.subarray(h * g.kBlocks, (h + 1) * g.kBlocks), (x.seq.b * p.nheadK + h) * KM);
    }
  }
  return out;
}

/**
 * The GPU block map against the selection reference (`compareSpargeSelect`, default margins); a row
 * is also excused where a block similarity it depends on is within 1e-5 of simthreshd1.
 */
function blockMapVerdict(
  plan: SpargePlan,
  data: readonly (SequenceData | undefined)[],
  gpu: { readonly map: Uint8Array; readonly lut: Int32Array; readonly validBlockNum: Int32Array },
): SpargeSelectComparison {
  const p = plan.attention;
  const r = plan.params;
  const inputs = pooledInputs(p, data);
  const sequences = p.mode === 'group' ? { seqstartQ: p.seqstartQ, seqstartK: p.seqstartK } : { seqlenQ: p.seqlenQ, seqlenK: p.seqlenK };
  const problem = {
    batch: p.batch,
    nhead: p.nheadQ,
    nheadK: p.nheadK,
    headDim: p.hdimQ,
    blockQ: r.blockQ,
    blockK: r.blockK,
    ...sequences,
    selection: r.selection,
    selectionValue: r.selectionValue,
    simthreshd1: r.simthreshd1,
    isCausal: r.isCausal,
    attentionSink: r.attentionSink,
  };
  const near = (s: number, theta: number): boolean => Math.abs(s - theta) < 1e-5;
  const excuseRow = (row: number): boolean => {
    const bh = Math.floor(row / p.qBlocks);
    const h = bh % p.nheadQ;
    const bhk = Math.floor(bh / p.nheadQ) * p.nheadK + Math.floor(h / (p.nheadQ / p.nheadK));
    const theta = r.simthreshd1[h]!;
    return (
      near(inputs.simQ[row]!, theta) ||
      Array.from({ length: p.kBlocks }, (_, j) => inputs.simK[bhk * p.kBlocks + j]!).some((s) => near(s, theta))
    );
  };
  return compareSpargeSelect(spargeSelectReference(problem, inputs), gpu, { excuseRow });
}

/** The reference output of one sequence over the GPU's map rows for it (no keys: O 0, LSE −∞). */
function attentionReference(plan: SpargePlan, x: SequenceData | undefined, seq: Sequence, gpuMap: Uint8Array): SpargeAttentionResult {
  const p = plan.attention;
  if (x === undefined)
    return { o: new Float64Array(p.nheadQ * seq.sq * p.hdimQ), lse: new Float64Array(p.nheadQ * seq.sq).fill(-Infinity) };
  const { qBlocks: qB, kBlocks: kB } = x.map.blockMap;
  const map = new Uint8Array(p.nheadQ * qB * kB);
  for (let h = 0; h < p.nheadQ; h++)
    for (let i = 0; i < qB; i++)
      for (let j = 0; j < kB; j++) map[(h * qB + i) * kB + j] = gpuMap[((seq.b * p.nheadQ + h) * p.qBlocks + i) * p.kBlocks + j]!;
  const args = {
    shape: x.map.shape,
    q: x.q,
    k: x.k,
    v: x.v,
    blockQ: plan.params.blockQ,
    blockK: plan.params.blockK,
    blocks: { batch: 1, nhead: p.nheadQ, qBlocks: qB, kBlocks: kB, map },
    isCausal: plan.params.isCausal,
    scale: p.scale,
  };
  if (p.pvMode === 'none') return spargeMaskedAttentionReference(args);
  return spargePvSkipAttentionReference({
    ...args,
    pvMode: p.pvMode,
    pvThreshold: plan.params.pvThreshold,
    warpRows: 16,
    alwaysComputedTail: 1,
  });
}

const maxAbs = (x: ArrayLike<number>): number => {
  let m = 0;
  for (let i = 0; i < x.length; i++) m = Math.max(m, Math.abs(x[i]!));
  return m;
};

/** The O and LSE bounds: int8 a flat 0.05 on O; else attentionFwdTolerance, plus 2^−threshold·max|v| per key block with a PV vote (its fp32 decisions). */
function toleranceOf(
  plan: SpargePlan,
  values: SpargeRandomInputs['values'],
): { readonly o: (want: number) => number; readonly lse: (want: number) => number } {
  const p = plan.attention;
  if (plan.params.int8) return { o: () => SPARGE_RANDOM_INT8_O_TOLERANCE, lse: () => Infinity };
  const tol = attentionFwdTolerance({
    dtype: p.dtype,
    seqlenK: Math.max(p.seqlenK, 1),
    hdimQ: p.hdimQ,
    scale: p.scale,
    maxAbsQ: maxAbs(values.q),
    maxAbsK: maxAbs(values.k),
    maxAbsV: maxAbs(values.v),
  });
  const slack = p.pvMode === 'none' ? 0 : Math.max(...plan.params.pvThreshold.map((t) => 2 ** -t)) * maxAbs(values.v) * p.kBlocks;
  return {
    o: (want) => tol.o.atol + tol.o.rtol * Math.abs(want) + slack,
    lse: (want) => tol.lse.atol + tol.lse.rtol * Math.abs(want) + slack,
  };
}

/** What comparing the outputs found. */
interface OutputCheck {
  bad: number;
  first: string;
  worstO: number;
}

/** Compares one sequence's O rows (and LSE rows, when given) with its reference. */
function checkSequence(
  plan: SpargePlan,
  seq: Sequence,
  ref: SpargeAttentionResult,
  got: { readonly o: Float64Array | Float32Array; readonly lse?: Float32Array },
  tol: ReturnType<typeof toleranceOf>,
  acc: OutputCheck,
): void {
  const p = plan.attention;
  const d = p.hdimQ;
  for (let h = 0; h < p.nheadQ; h++) {
    for (let r = 0; r < seq.sq; r++) {
      const base = rowOffset(p, p.oStrides, seq.b, seq.q0, h, r);
      for (let c = 0; c < d; c++) {
        const want = ref.o[(h * seq.sq + r) * d + c]!;
        const err = Math.abs(got.o[base + c]! - want);
        acc.worstO = Math.max(acc.worstO, Number.isNaN(err) ? Infinity : err);
        if (err <= tol.o(want)) continue;
        acc.bad++;
        acc.first ||=
          `O[b${seq.b} h${h} r${r} d${c}] = ${got.o[base + c]}, reference ${want} (|err| ` +
          `${err.toExponential(2)} > ${tol.o(want).toExponential(2)})`;
      }
      if (got.lse === undefined) continue;
      const gotL = got.lse[seq.b * p.lseStrides.batch + h * p.lseStrides.head + seq.q0 + r]!;
      const wantL = ref.lse[h * seq.sq + r]!;
      const ok = wantL === -Infinity ? gotL === -Infinity : Math.abs(gotL - wantL) <= tol.lse(wantL);
      if (ok) continue;
      acc.bad++;
      acc.first ||= `LSE[b${seq.b} h${h} r${r}] = ${gotL}, reference ${wantL}`;
    }
  }
}

/** The device buffers of one run. */
interface SpargeDeviceBuffers {
  readonly q: DeviceBuffer;
  readonly k: DeviceBuffer;
  readonly v: DeviceBuffer;
  readonly o: DeviceBuffer;
  readonly lse?: DeviceBuffer;
  readonly seqstartQ?: DeviceBuffer;
  readonly seqstartK?: DeviceBuffer;
}

function buffersOf(runner: SpargeRunner, p: SpargeFwdLaunchProblem, bits: SpargeRandomInputs['bits']): SpargeDeviceBuffers {
  const { device } = runner;
  const e = fmhaFwdOperandElements(p);
  return {
    q: device.upload(bits.q),
    k: device.upload(bits.k),
    v: device.upload(bits.v),
    o: device.alloc(Math.max(1, e.o) * 2).fill(0xff),
    ...(p.lse ? { lse: device.alloc(Math.max(1, e.lse) * 4).fill(0xff) } : {}),
    ...(p.mode === 'group'
      ? { seqstartQ: device.upload(new Int32Array(p.seqstartQ)), seqstartK: device.upload(new Int32Array(p.seqstartK)) }
      : {}),
  };
}

/** What a run produced (host copies): the block map, LUT and counts, O (decoded, in O's strides) and LSE when asked for. */
export interface SpargeRandomOutputs {
  readonly map: Uint8Array;
  readonly lut: Int32Array;
  readonly validBlockNum: Int32Array;
  readonly o: Float64Array | Float32Array;
  readonly lse?: Float32Array;
}

/** What `checkSpargeRandomOutputs` found: the block-map verdict and the elements of O and LSE off. */
export interface SpargeRandomCheck {
  readonly map: SpargeSelectComparison;
  readonly bad: number;
  readonly first: string;
  readonly worstO: number;
}

/**
 * Checks a run of `problem` on `inputs` (see the file comment): the block map against the
 * selection reference, then every O element and LSE row of every sequence against the reference
 * over the run's own map. CPU only.
 */
export function checkSpargeRandomOutputs(problem: SpargeProblem, inputs: SpargeRandomInputs, got: SpargeRandomOutputs): SpargeRandomCheck {
  const plan = planSparge(problem);
  const seqs = sequencesOf(plan.attention);
  const data = seqs.map((s) => sequenceData(plan, problem, inputs.values, s));
  const map = blockMapVerdict(plan, data, got);
  const tol = toleranceOf(plan, inputs.values);
  const acc: OutputCheck = { bad: 0, first: '', worstO: 0 };
  seqs.forEach((s, i) => checkSequence(plan, s, attentionReference(plan, data[i], s, got.map), got, tol, acc));
  return { map, ...acc };
}

/**
 * Runs `problem` through `runner` and checks it with `checkSpargeRandomOutputs`: no block-map row
 * wrong beyond rounding, no O or LSE element off. Asserts and returns a summary line.
 */
export async function runSpargeRandomCase(problem: SpargeProblem, runner: SpargeRunner): Promise<string> {
  const p = planSparge(problem).attention;
  const inputs = spargeRandomInputs(p);
  const buffers = buffersOf(runner, p, inputs.bits);
  const run = await runner.prepare(problem, buffers);
  try {
    run.launch();
    runner.device.synchronize();
    const e = fmhaFwdOperandElements(p);
    const o = decodeArray(p.dtype, new Uint16Array(buffers.o.copyToHost().buffer).subarray(0, e.o));
    const lse = buffers.lse ? { lse: new Float32Array(buffers.lse.copyToHost().buffer).subarray(0, e.lse) } : {};
    const found = checkSpargeRandomOutputs(problem, inputs, { ...run.readBlockMap(), o, ...lse });
    const name = run.plan.instance.name;
    assert.equal(found.map.wrong, 0, `${name}: ${found.map.wrong}/${found.map.rows} block-map rows wrong; first: ${found.map.first}`);
    assert.equal(found.bad, 0, `${name}: ${found.bad} elements off; first: ${found.first}`);
    const stats = run.pvStats();
    return (
      `${name}: block map ${found.map.rows} rows (${found.map.excused} within rounding), max ` +
      `|O − ref| ${found.worstO.toExponential(2)}, P·V tiles computed ${stats.computed} ` +
      `skipped ${stats.skipped}`
    );
  } finally {
    runner.device.synchronize();
    run.dispose();
    for (const b of Object.values(buffers) as DeviceBuffer[]) b.dispose();
  }
}
