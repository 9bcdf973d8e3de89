// GPU tests of the whole Sparge operator (node:test; `npm run test:gpu` or tools/device): the runner's
// block map against the CPU reference of stage 1 (rows may differ only within the CPU's selection
// margins), its attention output against the CPU masked attention over the map the GPU predicted, the
// accuracy on structured inputs (topk 0.5: relative L1 vs dense ≤ 0.05), topk 1.0 = dense attention,
// causal, cdf selection, GQA, varlen, int8 Q·Kᵀ and the PV-skip vote. Skipped (loudly) without a GPU.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeArray, encodeArray } from '@tilekit/numeric';
import { Device } from '@tilekit/runtime';
import { gpu, gpuTestCompiler } from '@tilekit/runtime/testing';
import { spargeBlockMapReference } from './spargeBlockMapReference.ts';
import type { SpargeParams } from './spargeHyperparameters.ts';
import { spargeMaskedAttentionReference, spargePvSkipAttentionReference } from './spargeReference.ts';
import { SpargeRunner, type SpargeProblem } from './spargeRunner.ts';
import { spargeRelativeL1, spargeSyntheticInputs } from './spargeSyntheticInputs.ts';

let runner: SpargeRunner | undefined;
const runnerOnce = (): SpargeRunner =>
  (runner ??= new SpargeRunner({ device: Device.open(0), compiler: gpuTestCompiler('sparge-runner-gpu') }));

interface RunnerCase {
  readonly label: string;
  readonly dtype: 'fp16' | 'bf16';
  readonly d: 64 | 128;
  readonly batch: number;
  readonly h: number;
  /** Batch mode length, or per-sequence lengths (group mode). */
  readonly s: number | readonly number[];
  readonly params: SpargeParams;
  readonly pipeline: 'vsa' | 'jenga';
  readonly pvMode?: 'none' | 'warp' | 'block';
  /** The largest relative L1 vs dense attention allowed (structured inputs). */
  readonly maxL1?: number;
}

const cases: readonly RunnerCase[] = [
  {
    label: 'vsa fp16 d64 b1 h2 s1024 topk 0.5: accuracy on structured inputs',
    dtype: 'fp16',
    d: 64,
    batch: 1,
    h: 2,
    s: 1024,
    params: { topk: 0.5 },
    pipeline: 'vsa',
    maxL1: 0.05,
  },
  {
    label: 'jenga bf16 d128 b2 h2 s1000 topk 1.0 = dense',
    dtype: 'bf16',
    d: 128,
    batch: 2,
    h: 2,
    s: 1000,
    params: { topk: 1 },
    pipeline: 'jenga',
    maxL1: 0.01,
  },
  {
    label: 'vsa fp16 d128 b1 h2 s2048 causal topk 0.3, per-head simthreshd1',
    dtype: 'fp16',
    d: 128,
    batch: 1,
    h: 2,
    s: 2048,
    params: { topk: 0.3, isCausal: true, simthreshd1: [-0.1, 0.5] },
    pipeline: 'vsa',
  },
  {
    label: 'jenga fp16 d64 b1 h4 s1536 cdf 0.9, no sink, no smoothing',
    dtype: 'fp16',
    d: 64,
    batch: 1,
    h: 4,
    s: 1536,
    params: { cdfthreshd: 0.9, attentionSink: false, smoothK: false },
    pipeline: 'jenga',
  },
  {
    label: 'vsa fp16 d128 varlen 17,259,1000 causal topk 0.5',
    dtype: 'fp16',
    d: 128,
    batch: 3,
    h: 2,
    s: [17, 259, 1000],
    params: { topk: 0.5, isCausal: true },
    pipeline: 'vsa',
  },
  {
    label: 'vsa fp16 d128 b1 h2 s2048 int8 Q·Kᵀ topk 0.4',
    dtype: 'fp16',
    d: 128,
    batch: 1,
    h: 2,
    s: 2048,
    params: { topk: 0.4, int8: true },
    pipeline: 'vsa',
    maxL1: 0.08,
  },
  {
    label: 'vsa fp16 d64 b1 h2 s2048 topk 0.6, block PV vote at threshold 8',
    dtype: 'fp16',
    d: 64,
    batch: 1,
    h: 2,
    s: 2048,
    params: { topk: 0.6, pvThreshold: 8 },
    pipeline: 'vsa',
    pvMode: 'block',
  },
];

for (const c of cases) {
  test(`kernel-sparge/gpu runner: ${c.label}`, gpu.options, async () => {
    const lens = Array.isArray(c.s) ? (c.s as readonly number[]) : Array<number>(c.batch).fill(c.s as number);
    const group = Array.isArray(c.s);
    // Structured inputs per sequence (batch 1 each), laid out packed bhsd (group mode: [h][all rows][d]).
    const total = lens.reduce((a, b) => a + b, 0);
    const rows = group ? total : lens[0]!;
    const batches = group ? 1 : c.batch;
    const q = new Float32Array(batches * c.h * rows * c.d);
    const k = new Float32Array(q.length);
    const v = new Float32Array(q.length);
    const seq = lens.map((n, b) =>
      spargeSyntheticInputs({ batch: 1, nhead: c.h, seqlenQ: n, seqlenK: n, headDim: c.d }, { seed: 40 + b, roundTo: c.dtype }),
    );
    let start = 0;
    lens.forEach((n, b) => {
      for (let h = 0; h < c.h; h++) {
        const dst = group ? (h * rows + start) * c.d : (b * c.h + h) * rows * c.d;
        q.set(seq[b]!.q.subarray(h * n * c.d, (h + 1) * n * c.d), dst);
        k.set(seq[b]!.k.subarray(h * n * c.d, (h + 1) * n * c.d), dst);
        v.set(seq[b]!.v.subarray(h * n * c.d, (h + 1) * n * c.d), dst);
      }
      start += n;
    });
    const seqstart = [0];
    for (const n of lens) seqstart.push(seqstart[seqstart.length - 1]! + n);
    const problem: SpargeProblem = {
      dtype: c.dtype,
      batch: c.batch,
      nheadQ: c.h,
      hdimQ: c.d,
      ...(group ? { seqstartQ: seqstart, seqstartK: seqstart } : { seqlenQ: rows, seqlenK: rows }),
      lse: c.params.int8 !== true,
      params: c.params,
      pipeline: c.pipeline,
      ...(c.pvMode ? { pvMode: c.pvMode } : {}),
    };
    const device = Device.open(0);
    const bufs = {
      q: device.upload(encodeArray(c.dtype, q)),
      k: device.upload(encodeArray(c.dtype, k)),
      v: device.upload(encodeArray(c.dtype, v)),
      o: device.alloc(q.length * 2).fill(0xff),
      lse: device.alloc(batches * c.h * rows * 4).fill(0xff),
      ...(group ? { seqstartQ: device.upload(new Int32Array(seqstart)), seqstartK: device.upload(new Int32Array(seqstart)) } : {}),
    };
    const run = await runnerOnce().prepare(problem, bufs);
    try {
      run.launch();
      device.synchronize();
      const gpuMap = run.readBlockMap();
      const o = decodeArray(c.dtype, new Uint16Array(bufs.o.copyToHost().buffer));
      const { qBlocks, kBlocks } = run.plan.attention;
      let wrongRows = 0;
      let excusedRows = 0;
      let worstL1 = 0;
      let worstErr = 0;
      start = 0;
      lens.forEach((n, b) => {
        if (n === 0) return;
        const shape = { batch: 1, nhead: c.h, seqlenQ: n, seqlenK: n, headDim: c.d };
        const cpu = spargeBlockMapReference({ shape, q: seq[b]!.q, k: seq[b]!.k, params: { ...c.params, blockQ: 128, blockK: 128 } });
        const qB = cpu.blockMap.qBlocks;
        const kB = cpu.blockMap.kBlocks;
        // Stage 1: the GPU rows of this sequence against the CPU rows.
        const used = new Uint8Array(c.h * qB * kB);
        for (let h = 0; h < c.h; h++) {
          for (let i = 0; i < qB; i++) {
            const row = (b * c.h + h) * qBlocks + i;
            let same = true;
            for (let j = 0; j < kB; j++) {
              const g = gpuMap.map[row * kBlocks + j]!;
              used[(h * qB + i) * kB + j] = g;
              if (g !== cpu.blockMap.map[(h * qB + i) * kB + j]) same = false;
            }
            if (same) continue;
            const r = h * qB + i;
            const close = cpu.scoreMargin[r]! < 1e-3 * (1 + 8) || cpu.massMargin[r]! < 1e-3;
            if (close) excusedRows++;
            else wrongRows++;
          }
        }
        // Stage 2: the GPU output against the CPU attention over the GPU's own map (K of the int8 path quantized on the GPU: compare loosely).
        const got = new Float64Array(c.h * n * c.d);
        for (let h = 0; h < c.h; h++) {
          const src = group ? (h * rows + start) * c.d : (b * c.h + h) * rows * c.d;
          got.set(o.subarray(src, src + n * c.d), h * n * c.d);
        }
        const attentionArgs = {
          shape,
          q: seq[b]!.q,
          k: seq[b]!.k,
          v: seq[b]!.v,
          blockQ: 128,
          blockK: 128,
          blocks: { batch: 1, nhead: c.h, qBlocks: qB, kBlocks: kB, map: used },
          isCausal: c.params.isCausal === true,
          scale: Math.fround(1 / Math.sqrt(c.d)),
        };
        // With the vote on, the reference is the PV-skip model (upstream's: skipped tiles add nothing to l).
        const masked =
          c.pvMode === undefined || c.pvMode === 'none'
            ? spargeMaskedAttentionReference(attentionArgs)
            : spargePvSkipAttentionReference({
                ...attentionArgs,
                pvMode: c.pvMode,
                pvThreshold: c.params.pvThreshold ?? 50,
                warpRows: 16,
                alwaysComputedTail: 1,
              });
        for (let e = 0; e < got.length; e++)
          worstErr = Math.max(worstErr, Number.isNaN(got[e]!) ? Infinity : Math.abs(got[e]! - masked.o[e]!));
        if (c.maxL1 !== undefined) {
          const dense = spargeMaskedAttentionReference({
            shape,
            q: seq[b]!.q,
            k: seq[b]!.k,
            v: seq[b]!.v,
            blockQ: 128,
            blockK: 128,
            blocks: { batch: 1, nhead: c.h, qBlocks: qB, kBlocks: kB, map: new Uint8Array(c.h * qB * kB).fill(1) },
            isCausal: c.params.isCausal === true,
            scale: Math.fround(1 / Math.sqrt(c.d)),
          });
          worstL1 = Math.max(worstL1, spargeRelativeL1(got, dense.o));
        }
        start += n;
      });
      const sparsity = run.achievedSparsity();
      const stats = run.pvStats();
      console.log(
        `${run.plan.instance.name}: sparsity ${sparsity.toFixed(3)}, map rows excused ` +
          `${excusedRows}, max |O − masked ref| ${worstErr.toExponential(2)}` +
          `${c.maxL1 !== undefined ? `, relative L1 vs dense ${worstL1.toExponential(2)}` : ''}, ` +
          `P·V computed ${stats.computed} skipped ${stats.skipped}`,
      );
      assert.equal(wrongRows, 0, `${wrongRows} block-map rows differ from the CPU reference beyond its margins`);
      // The vote's fp32 decisions may differ from the model's float64 ones only where a group's skipped weights are ≤ 2^−threshold of its row maxima.
      const tolerance = c.params.int8 === true ? 0.05 : c.pvMode === 'block' ? 1e-2 : c.dtype === 'bf16' ? 2e-2 : 4e-3;
      assert.ok(worstErr <= tolerance, `max |O − masked reference| ${worstErr} > ${tolerance}`);
      if (c.maxL1 !== undefined) assert.ok(worstL1 <= c.maxL1, `relative L1 vs dense ${worstL1} > ${c.maxL1}`);
      if (c.params.topk === 1) assert.equal(sparsity, 0, 'topk 1 visits every block');
    } finally {
      run.dispose();
      for (const buf of Object.values(bufs)) buf.dispose();
    }
  });
}
