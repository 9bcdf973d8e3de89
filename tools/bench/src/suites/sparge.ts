// The sparge benchmark suite: Sparge attention (@tilekit/kernel-sparge's runner: GPU block map, then
// the sparse vsa attention) against OUR dense forward (@tilekit/kernel-fmha-fwd's runner, same shape,
// same run: the `ours-dense` baseline) and torch SDPA (torch_reference.py's `fmha_fwd`: flash, cudnn,
// efficient) at b2 h16 d128 fp16. Inputs have locality (spargeSyntheticInputs), so sparsity exists:
// the generator is O(s·d) per head on the CPU, so ONE (b, h) slice is drawn per sequence length and
// head bh gets it rotated by bh·⌊s/(b·h)⌋ rows (recorded in params.inputs). Each case is validated:
// stage 1 (the GPU map of sampled heads against the float64 block-map reference, rows excused only
// within rounding), stage 2 (sampled O rows against a float64 masked reference of the GPU's map; PV
// modes: whole query blocks against the PV-skip model; int8: Q and K quantized on the CPU the same
// way), and at topk 1.0 the whole O against our dense O.
import { summarizeTimes } from '@tilekit/host';
import { attentionFwdTolerance } from '@tilekit/fmha';
import {
  FmhaFwdCombineKernel,
  FmhaFwdKernel,
  FmhaFwdRunner,
  type FmhaFwdCombineInstance,
  type FmhaFwdInstance,
} from '@tilekit/kernel-fmha-fwd';
import {
  compareSpargeSelect,
  SPARGE_DEFAULTS,
  spargeBlockMapReference,
  spargeDequantizeBlocksInt8,
  spargePvSkipAttentionReference,
  spargeQuantizeQkInt8,
  spargeSelectReference,
  spargeSyntheticInputs,
  SpargeRunner,
  type SpargeProblem,
  type SpargePvModeName,
} from '@tilekit/kernel-sparge';
import { decode, encodeArray } from '@tilekit/numeric';
import { buildOncePerInstance, Device, NvccCompiler, timeLaunches, type Compiler, type DeviceBuffer } from '@tilekit/runtime';
import { attentionForwardFlops, tflopsOf } from '../flops.ts';
import type { BaselineMeasurement, OurMeasurement } from '../benchResult.ts';
import type { BenchSuite, OurCaseResult, SuiteCase } from '../runSuite.ts';
import { fmhaFwdBenchProblem } from './fmhaFwd.ts';

const WARMUP = 3;
const REPEAT = 20;
/** Sparge's tiles (the attention kernel's): the block map is built on 128 × 128 blocks. */
const BLOCK = 128;
/** The seed of the synthetic slice (one per sequence length). */
const INPUT_SEED = 1;

/** One benchmarked Sparge problem (self-attention, fp16, bhsd, vsa pipeline). */
export interface SpargeBenchSpec {
  readonly b: number;
  readonly h: number;
  readonly s: number;
  readonly d: 64 | 128;
  readonly topk: number;
  readonly causal: boolean;
  readonly int8: boolean;
  readonly pvMode: SpargePvModeName;
  /** PV-skip threshold (log2 units); only meaningful with pvMode warp/block. */
  readonly pvThreshold: number;
}

/** A case as the suite registers it: flat params, torch's dense `fmha_fwd` of the same shape, dense-equivalent FLOPs. */
export interface SpargeBenchCase {
  readonly name: string;
  readonly spec: SpargeBenchSpec;
  readonly params: Readonly<Record<string, string | number | boolean>>;
  readonly torch: { readonly op: 'fmha_fwd'; readonly params: Readonly<Record<string, unknown>> };
  readonly flops: number;
}

/** How head bh's rows are made from the one generated slice: rotated by bh·⌊s/(b·h)⌋ rows. */
export function spargeHeadRotation(bh: number, s: number, heads: number): number {
  return (bh * Math.floor(s / heads)) % s;
}

/** `sparge_b2_h16_s8192_d128_topk0.4_fp16`, with `_causal`, `_int8`, `_pv-warp8` (a PV mode or a non-default threshold) when they apply. */
export function spargeBenchName(c: SpargeBenchSpec): string {
  const pv = c.pvMode === 'none' && c.pvThreshold === SPARGE_DEFAULTS.pvThreshold ? '' : `_pv-${c.pvMode}${c.pvThreshold}`;
  return `sparge_b${c.b}_h${c.h}_s${c.s}_d${c.d}_topk${c.topk}${c.causal ? '_causal' : ''}${c.int8 ? '_int8' : ''}${pv}_fp16`;
}

/** Dense-equivalent FLOPs (docs/benchmarks.md): 4·b·h·s²·d, halved for causal. */
export function spargeDenseFlops(c: SpargeBenchSpec): number {
  return attentionForwardFlops({ b: c.b, h: c.h, sq: c.s, sk: c.s, dQk: c.d, causal: c.causal });
}

/** The case of a spec: flat params (inputs described), torch's dense SDPA of the same shape. */
export function spargeBenchCase(c: SpargeBenchSpec): SpargeBenchCase {
  const params = {
    dtype: 'fp16',
    b: c.b,
    h: c.h,
    s: c.s,
    d: c.d,
    topk: c.topk,
    causal: c.causal,
    int8: c.int8,
    pipeline: 'vsa',
    pvMode: c.pvMode,
    pvThreshold: c.pvThreshold,
    inputs: `spargeSyntheticInputs seed ${INPUT_SEED}, one (b,h) slice of ${c.s}x${c.d}; head bh = slice rotated by bh*floor(s/(b*h)) rows`,
  };
  const torch = {
    op: 'fmha_fwd' as const,
    params: { dtype: 'fp16', b: c.b, h: c.h, hk: c.h, d: c.d, dv: c.d, causal: c.causal, sq: c.s, sk: c.s, layout: 'bhsd', seed: 1 },
  };
  return { name: spargeBenchName(c), spec: c, params, torch, flops: spargeDenseFlops(c) };
}

/** The topk values of the sweep. */
export const SPARGE_BENCH_TOPKS: readonly number[] = Object.freeze([0.1, 0.2, 0.4, 0.5, 0.7, 1.0]);

const base = {
  b: 2,
  h: 16,
  d: 128 as const,
  causal: false,
  int8: false,
  pvMode: 'none' as SpargePvModeName,
  pvThreshold: SPARGE_DEFAULTS.pvThreshold,
};

/**
 * The cases, ordered by sequence length (inputs are made once per length): b2 h16 d128 fp16
 * at s ∈ {8192, 16384, 32768} × topk ∈ SPARGE_BENCH_TOPKS; at s 16384: each PV mode (none, warp,
 * block) at topk 0.5 with pvThreshold 8, int8 Q·Kᵀ at topk 0.4 and 0.1, causal at topk 0.4.
 */
export const SPARGE_BENCH_SPECS: readonly SpargeBenchSpec[] = Object.freeze([
  ...SPARGE_BENCH_TOPKS.map((topk) => ({ ...base, s: 8192, topk })),
  ...SPARGE_BENCH_TOPKS.map((topk) => ({ ...base, s: 16384, topk })),
  ...(['none', 'warp', 'block'] as const).map((pvMode) => ({ ...base, s: 16384, topk: 0.5, pvMode, pvThreshold: 8 })),
  ...[0.4, 0.1].map((topk) => ({ ...base, s: 16384, topk, int8: true })),
  { ...base, s: 16384, topk: 0.4, causal: true },
  ...SPARGE_BENCH_TOPKS.map((topk) => ({ ...base, s: 32768, topk })),
]);

/** Every case of the suite, in order. */
export const SPARGE_BENCH_CASES: readonly SpargeBenchCase[] = Object.freeze(SPARGE_BENCH_SPECS.map(spargeBenchCase));

/** Timings of one case (ms, medians). */
export interface SpargeTimings {
  readonly blockMapMs: number;
  readonly attentionMs: number;
  readonly totalMs: number;
  readonly denseMs: number;
}

/** Our figures of a case: attention ms/TFLOP/s (dense-equivalent), map and total ms, speedups over our dense forward, sparsity and PV counters. */
export interface SpargeOurMeasurement extends OurMeasurement {
  readonly blockMapMs: number;
  readonly totalMs: number;
  readonly totalTflops: number;
  /** Block-map time / our dense attention time. */
  readonly blockMapFraction: number;
  readonly denseMs: number;
  readonly denseInstance: string;
  /** denseMs / attention ms. */
  readonly speedupVsDense: number;
  /** denseMs / (map + attention) ms. */
  readonly totalSpeedupVsDense: number;
  readonly achievedSparsity: number;
  readonly pvComputed: number;
  readonly pvSkipped: number;
}

/**
 * Assembles our measurement from the timings (all ms > 0): TFLOP/s are dense-equivalent
 * (`flops` / ms), speedups are denseMs / ms. Postcondition (tested): speedupVsDense ≥
 * totalSpeedupVsDense when blockMapMs ≥ 0 and totalMs ≥ attentionMs.
 */
export function spargeOurMeasurement(
  flops: number,
  t: SpargeTimings,
  extra: { instance: string; denseInstance: string; achievedSparsity: number; pvComputed: number; pvSkipped: number },
): SpargeOurMeasurement {
  return {
    ms: t.attentionMs,
    tflops: tflopsOf(flops, t.attentionMs),
    instance: extra.instance,
    blockMapMs: t.blockMapMs,
    totalMs: t.totalMs,
    totalTflops: tflopsOf(flops, t.totalMs),
    blockMapFraction: t.blockMapMs / t.denseMs,
    denseMs: t.denseMs,
    denseInstance: extra.denseInstance,
    speedupVsDense: t.denseMs / t.attentionMs,
    totalSpeedupVsDense: t.denseMs / t.totalMs,
    achievedSparsity: extra.achievedSparsity,
    pvComputed: extra.pvComputed,
    pvSkipped: extra.pvSkipped,
  };
}

/** Rows of one head made from the slice: `x` (s·d values) rotated by `rotation` rows. */
export function rotateRows<T extends Float32Array | Uint16Array>(x: T, rotation: number, d: number): T {
  const out = new (x.constructor as new (n: number) => T)(x.length);
  const cut = rotation * d;
  out.set(x.subarray(cut) as T, 0);
  out.set(x.subarray(0, cut) as T, x.length - cut);
  return out;
}

/**
 * One query row of block-masked attention in float64 (q: that row's d values; k, v: the head's
 * s·d values): the keys of the key blocks `mapRow` selects (blockK rows each) and, when causal,
 * key ≤ row. Returns O (d values; zeros when no key is kept).
 */
export function spargeMaskedRow(
  q: ArrayLike<number>,
  k: ArrayLike<number>,
  v: ArrayLike<number>,
  mapRow: ArrayLike<number>,
  row: number,
  opts: { s: number; d: number; blockK: number; causal: boolean; scale: number },
): Float64Array {
  const { s, d, blockK, causal, scale } = opts;
  const logits: number[] = [];
  const keys: number[] = [];
  let max = -Infinity;
  for (let j = 0; j < mapRow.length; j++) {
    if (mapRow[j] !== 1) continue;
    const end = Math.min(s, (j + 1) * blockK, causal ? row + 1 : Infinity);
    for (let key = j * blockK; key < end; key++) {
      let dot = 0;
      for (let c = 0; c < d; c++) dot += q[c]! * k[key * d + c]!;
      logits.push(dot * scale);
      keys.push(key);
      max = Math.max(max, dot * scale);
    }
  }
  const o = new Float64Array(d);
  let sum = 0;
  keys.forEach((key, t) => {
    const e = Math.exp(logits[t]! - max);
    sum += e;
    for (let c = 0; c < d; c++) o[c]! += e * v[key * d + c]!;
  });
  if (sum > 0) for (let c = 0; c < d; c++) o[c]! /= sum;
  return o;
}

function maxAbs(x: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < x.length; i++) m = Math.max(m, Math.abs(x[i]!));
  return m;
}

const fp16Value = Float64Array.from({ length: 1 << 16 }, (_, bits) => decode('fp16', bits));

/** The device inputs of one sequence length and the slice they were made from. */
interface SpargeInputs {
  readonly s: number;
  readonly slice: { q: Float32Array; k: Float32Array; v: Float32Array };
  readonly q: DeviceBuffer;
  readonly k: DeviceBuffer;
  readonly v: DeviceBuffer;
  readonly dense: Map<string, { ms: number; instance: string; o?: Uint16Array }>;
}

/** A `BenchSuite` for `runSuite` over `cases` on device 0. */
export function spargeSuite(cases: readonly SpargeBenchCase[] = SPARGE_BENCH_CASES, log: (line: string) => void = console.log): BenchSuite {
  const device = Device.open(0);
  const compiler: Compiler = new NvccCompiler();
  const sparge = new SpargeRunner({ device, compiler });
  const buildKernel = buildOncePerInstance((instance: FmhaFwdInstance) => FmhaFwdKernel.build(instance, { device, compiler }));
  const buildCombine = buildOncePerInstance((instance: FmhaFwdCombineInstance) =>
    FmhaFwdCombineKernel.build(instance, { device, compiler }),
  );
  const byName = new Map(cases.map((c) => [c.name, c]));
  let inputs: SpargeInputs | undefined;
  const time = (launch: () => void): number => summarizeTimes(timeLaunches(device, launch, { warmup: WARMUP, repeat: REPEAT })).median;

  const disposeInputs = (): void => {
    if (inputs === undefined) return;
    device.synchronize();
    for (const buf of [inputs.q, inputs.k, inputs.v]) buf.dispose();
    inputs = undefined;
  };

  const inputsFor = (c: SpargeBenchSpec): SpargeInputs => {
    if (inputs?.s === c.s) return inputs;
    disposeInputs();
    const started = Date.now();
    const slice = spargeSyntheticInputs(
      { batch: 1, nhead: 1, seqlenQ: c.s, seqlenK: c.s, headDim: c.d },
      { seed: INPUT_SEED, roundTo: 'fp16' },
    );
    const heads = c.b * c.h;
    const upload = (x: Float32Array): DeviceBuffer => {
      const bits = encodeArray('fp16', x) as Uint16Array;
      const full = new Uint16Array(heads * bits.length);
      for (let bh = 0; bh < heads; bh++) full.set(rotateRows(bits, spargeHeadRotation(bh, c.s, heads), c.d), bh * bits.length);
      return device.upload(full);
    };
    inputs = { s: c.s, slice, q: upload(slice.q), k: upload(slice.k), v: upload(slice.v), dense: new Map() };
    log(`  inputs s${c.s}: one slice generated and tiled over ${heads} heads in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return inputs;
  };

  const denseFor = async (c: SpargeBenchSpec, inp: SpargeInputs): Promise<{ ms: number; instance: string; o?: Uint16Array }> => {
    const key = `${c.causal}`;
    const cached = inp.dense.get(key);
    if (cached !== undefined) return cached;
    const runner = await FmhaFwdRunner.create(
      fmhaFwdBenchProblem({ dtype: 'fp16', b: c.b, h: c.h, hk: c.h, d: c.d, dv: c.d, causal: c.causal, sq: c.s, sk: c.s }),
      { device, compiler, buildKernel, buildCombine },
    );
    const o = device.alloc(c.b * c.h * c.s * c.d * 2).fill(0xff);
    try {
      const run = runner.prepare({ q: inp.q, k: inp.k, v: inp.v, o });
      const ms = time(run.launch);
      device.synchronize();
      const dense = {
        ms,
        instance: runner.instances.map((i) => i.name).join('+'),
        ...(c.causal ? {} : { o: new Uint16Array(o.copyToHost().buffer) }),
      };
      inp.dense.set(key, dense);
      log(`  our dense s${c.s}${c.causal ? ' causal' : ''}: ${ms.toFixed(3)} ms (${dense.instance})`);
      return dense;
    } finally {
      device.synchronize();
      o.dispose();
      runner.dispose();
    }
  };

  return {
    name: 'sparge',
    cases: cases.map((c) => ({ name: c.name, params: c.params, torch: c.torch })),
    async runOurs(sc: SuiteCase): Promise<OurCaseResult> {
      const bc = byName.get(sc.name)!;
      const c = bc.spec;
      const inp = inputsFor(c);
      const dense = await denseFor(c, inp);
      const problem: SpargeProblem = {
        dtype: 'fp16',
        batch: c.b,
        nheadQ: c.h,
        hdimQ: c.d,
        seqlenQ: c.s,
        seqlenK: c.s,
        params: { topk: c.topk, isCausal: c.causal, int8: c.int8, pvThreshold: c.pvThreshold },
        pvMode: c.pvMode,
      };
      const o = device.alloc(c.b * c.h * c.s * c.d * 2).fill(0xff);
      const run = await sparge.prepare(problem, { q: inp.q, k: inp.k, v: inp.v, o });
      try {
        run.launch();
        device.synchronize();
        const maps = run.readBlockMap();
        const achievedSparsity = run.achievedSparsity();
        const pv = run.pvStats();
        const oBits = new Uint16Array(o.copyToHost().buffer);
        const blockMapMs = time(run.launchBlockMap);
        const attentionMs = time(run.launchAttention);
        const totalMs = time(run.launch);
        device.synchronize();
        const check = validateSparge(c, run.plan.attention.scale, inp.slice, maps, oBits, dense.o);
        if (!check.valid) log(`  ${sc.name}: INVALID: ${check.first}`);
        const ours = spargeOurMeasurement(
          bc.flops,
          { blockMapMs, attentionMs, totalMs, denseMs: dense.ms },
          {
            instance: `${run.plan.instance.name} + block map d${c.d}`,
            denseInstance: dense.instance,
            achievedSparsity,
            pvComputed: pv.computed,
            pvSkipped: pv.skipped,
          },
        );
        log(
          `  ${sc.name}: map ${blockMapMs.toFixed(3)} ms (${(100 * ours.blockMapFraction).toFixed(1)}% of dense), attention ${attentionMs.toFixed(3)} ms = ${ours.speedupVsDense.toFixed(2)}x dense (total ${ours.totalSpeedupVsDense.toFixed(2)}x), sparsity ${achievedSparsity.toFixed(3)}, P·V computed ${pv.computed} skipped ${pv.skipped}`,
        );
        const baselines: Record<string, BaselineMeasurement> = { 'ours-dense': { ms: dense.ms, tflops: tflopsOf(bc.flops, dense.ms) } };
        return { ours, valid: check.valid, maxAbsErr: check.maxAbsErr, note: check.note, baselines };
      } finally {
        device.synchronize();
        run.dispose();
        o.dispose();
      }
    },
    dispose(): void {
      disposeInputs();
    },
  };
}

/** The verdict of one case's validation. */
export interface SpargeValidation {
  readonly valid: boolean;
  readonly maxAbsErr: number;
  readonly first: string;
  readonly note: string;
}

/** Heads whose map and rows are checked: the first, a middle one and the last (b·h of them). */
export function spargeCheckedHeads(heads: number): number[] {
  return [...new Set([0, Math.floor(heads / 2) + 1, heads - 1].map((x) => Math.min(heads - 1, x)))];
}

/**
 * Validates a run (see the file comment): stage 1 per checked head against spargeBlockMapReference
 * (compareSpargeSelect: rows may differ only within rounding); stage 2 on sampled rows (PV modes:
 * three whole query blocks) against float64 references of the GPU's own map; at topk 1 (not causal)
 * every O element against our dense O, within twice the fp16 tolerance.
 */
export function validateSparge(
  c: SpargeBenchSpec,
  scale: number,
  slice: { q: Float32Array; k: Float32Array; v: Float32Array },
  maps: { readonly map: Uint8Array; readonly lut: Int32Array; readonly validBlockNum: Int32Array },
  oBits: Uint16Array,
  denseO: Uint16Array | undefined,
): SpargeValidation {
  const { s, d } = c;
  const heads = c.b * c.h;
  const QM = Math.ceil(s / BLOCK);
  const KM = Math.ceil(s / BLOCK);
  const shape1 = { batch: 1, nhead: 1, nheadK: 1, seqlenQ: s, seqlenK: s, headDim: d };
  let wrong = 0;
  let checked = 0;
  let maxAbsErr = 0;
  let first = '';
  let mapRows = 0;
  let excused = 0;
  let skipEffect = 0;
  const fail = (why: string): void => {
    wrong++;
    first ||= why;
  };
  for (const bh of spargeCheckedHeads(heads)) {
    const rot = spargeHeadRotation(bh, s, heads);
    const hq = rotateRows(slice.q, rot, d);
    const hk = rotateRows(slice.k, rot, d);
    const hv = rotateRows(slice.v, rot, d);
    // Stage 1: this head's GPU map against the float64 reference.
    const ref = spargeBlockMapReference({
      shape: shape1,
      q: hq,
      k: hk,
      params: { topk: c.topk, isCausal: c.causal, blockQ: BLOCK, blockK: BLOCK },
    });
    const p = ref.params;
    const sel = spargeSelectReference(
      {
        ...shape1,
        blockQ: BLOCK,
        blockK: BLOCK,
        selection: p.selection,
        selectionValue: p.selectionValue,
        simthreshd1: p.simthreshd1,
        isCausal: p.isCausal,
        attentionSink: p.attentionSink,
      },
      { pooledQ: ref.pooledQ, simQ: ref.similarityQ, pooledK: ref.pooledK, simK: ref.similarityK },
    );
    const headMap = maps.map.subarray(bh * QM * KM, (bh + 1) * QM * KM);
    const verdict = compareSpargeSelect(sel, {
      map: headMap,
      lut: maps.lut.subarray(bh * QM * KM, (bh + 1) * QM * KM),
      validBlockNum: maps.validBlockNum.subarray(bh * QM, (bh + 1) * QM),
    });
    mapRows += verdict.rows;
    excused += verdict.excused;
    if (verdict.wrong > 0) fail(`block map head ${bh}: ${verdict.wrong}/${verdict.rows} rows wrong; ${verdict.first}`);
    // Stage 2 inputs as the kernel sees them (int8: quantized per block the same way, then dequantized).
    let qv: Float32Array | Float64Array = hq;
    let kv: Float32Array | Float64Array = hk;
    if (c.int8) {
      const quantized = spargeQuantizeQkInt8(shape1, hq, hk, BLOCK, BLOCK, true);
      qv = spargeDequantizeBlocksInt8(quantized.q, 1, 1, s, d);
      kv = spargeDequantizeBlocksInt8(quantized.k, 1, 1, s, d);
    }
    const tol = attentionFwdTolerance({
      dtype: 'fp16',
      seqlenK: s,
      hdimQ: d,
      scale,
      maxAbsQ: maxAbs(qv),
      maxAbsK: maxAbs(kv),
      maxAbsV: maxAbs(hv),
    });
    // The GPU's fp32 vote may differ from the float64 model's only for a group at the threshold,
    // whose skipped weights are ≤ 2^−pvThreshold of the row max: allow two such weights of max |v|.
    const skipSlack = c.pvMode === 'none' ? 0 : 2 ** -c.pvThreshold * maxAbs(hv) * 2;
    const compareRow = (row: number, want: ArrayLike<number>): void => {
      const at = (bh * s + row) * d;
      for (let e = 0; e < d; e++) {
        const got = fp16Value[oBits[at + e]!]!;
        const err = Math.abs(got - want[e]!);
        maxAbsErr = Number.isNaN(err) ? Infinity : Math.max(maxAbsErr, err);
        checked++;
        if (!(err <= tol.o.atol + tol.o.rtol * Math.abs(want[e]!) + skipSlack))
          fail(`O[head ${bh} row ${row} d${e}] = ${got}, reference ${want[e]}`);
      }
    };
    if (c.pvMode === 'none') {
      for (const row of [...new Set([0, s - 1, (bh * 7919 + 1299709) % s])]) {
        const i = Math.floor(row / BLOCK);
        const want = spargeMaskedRow(qv.subarray(row * d, (row + 1) * d), kv, hv, headMap.subarray(i * KM, (i + 1) * KM), row, {
          s,
          d,
          blockK: BLOCK,
          causal: c.causal,
          scale,
        });
        compareRow(row, want);
      }
    } else {
      // The PV vote is per query block: model whole blocks (rows 0 … of block i against every key).
      for (const i of [...new Set([0, Math.floor(QM / 2), QM - 1])]) {
        const rows = Math.min(BLOCK, s - i * BLOCK);
        const args = {
          shape: { ...shape1, seqlenQ: rows },
          q: hq.subarray(i * BLOCK * d, (i * BLOCK + rows) * d),
          k: hk,
          v: hv,
          blockQ: BLOCK,
          blockK: BLOCK,
          blocks: { batch: 1, nhead: 1, qBlocks: 1, kBlocks: KM, map: headMap.slice(i * KM, (i + 1) * KM) },
          isCausal: false,
          scale,
        };
        const model = spargePvSkipAttentionReference({
          ...args,
          pvMode: c.pvMode,
          pvThreshold: c.pvThreshold,
          warpRows: 16,
          alwaysComputedTail: 1,
        });
        for (let r = 0; r < rows; r++) compareRow(i * BLOCK + r, model.o.subarray(r * d, (r + 1) * d));
        if (i === 0) {
          // What skipping changes (first block only: the model is the costly part of validation).
          const exact = spargePvSkipAttentionReference({ ...args, pvMode: 'none', pvThreshold: Infinity });
          for (let x = 0; x < rows * d; x++) skipEffect = Math.max(skipEffect, Math.abs(model.o[x]! - exact.o[x]!));
        }
      }
    }
  }
  let denseCheck = '';
  if (c.topk === 1 && denseO !== undefined) {
    const tol = attentionFwdTolerance({
      dtype: 'fp16',
      seqlenK: s,
      hdimQ: d,
      scale,
      maxAbsQ: maxAbs(slice.q),
      maxAbsK: maxAbs(slice.k),
      maxAbsV: maxAbs(slice.v),
    });
    let bad = 0;
    let worst = 0;
    for (let x = 0; x < oBits.length; x++) {
      const want = fp16Value[denseO[x]!]!;
      const err = Math.abs(fp16Value[oBits[x]!]! - want);
      worst = Number.isNaN(err) ? Infinity : Math.max(worst, err);
      if (!(err <= 2 * (tol.o.atol + tol.o.rtol * Math.abs(want)))) {
        bad++;
        first ||= `O[${x}] = ${fp16Value[oBits[x]!]}, our dense ${want}`;
      }
    }
    wrong += bad;
    maxAbsErr = Math.max(maxAbsErr, worst);
    denseCheck = `; all ${oBits.length} O elements vs our dense O: ${bad} outside 2x fp16 tolerance, max |err| ${worst.toExponential(2)}`;
  }
  const stage2 =
    c.pvMode === 'none'
      ? 'sampled rows vs a float64 masked reference of the GPU map'
      : `whole query blocks vs the PV-skip model (pvThreshold ${c.pvThreshold}; in query block 0 the skip moves O by up to ${skipEffect.toExponential(2)} vs no skip)`;
  const note = `block map: ${mapRows} rows of ${spargeCheckedHeads(heads).length} heads vs float64 reference, ${excused} within rounding; ${checked} O elements (${stage2}${c.int8 ? ', Q/K int8-quantized on the CPU' : ''})${denseCheck}`;
  return { valid: wrong === 0 && checked > 0, maxAbsErr, first, note };
}
