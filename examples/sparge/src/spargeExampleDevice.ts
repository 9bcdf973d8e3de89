// example_sparge on a GPU: uploads the inputs, runs both stages once (validated), times them, and checks the block map and O/LSE.
import { summarizeTimes, tflops } from '@tilekit/host';
import { compareSpargeSelect, spargeSelectReference, SpargeRunner, type SpargeBlockMap, type SpargePlan } from '@tilekit/kernel-sparge';
import { decodeArray } from '@tilekit/numeric';
import { Device, timeLaunches, type Compiler, type DeviceBuffer } from '@tilekit/runtime';
import { compareSpargeAttention } from './spargeExampleCompare.ts';
import type { SpargeExampleArgs } from './spargeExampleFlags.ts';
import type { SpargeExampleInputs } from './spargeExampleInputs.ts';
import { spargeDenseFlops, spargeProblemFromArgs } from './spargeExamplePlan.ts';
import { spargeAttentionReference, type SpargeCpuReference } from './spargeExampleReference.ts';
import { logSparsity } from './spargeExampleSparsity.ts';

type Log = (line: string) => void;
type PreparedSparge = Awaited<ReturnType<SpargeRunner['prepare']>>;

/** What the first (validated) launch produced, read back. */
interface SpargeFirstRun {
  readonly gpuMap: ReturnType<PreparedSparge['readBlockMap']>;
  readonly sparsity: number;
  readonly pv: ReturnType<PreparedSparge['pvStats']>;
  readonly oHost: ArrayLike<number>;
  readonly lseHost: Float32Array | undefined;
}

/** Runs, times and (with `cpu`) validates both stages on device 0; returns the exit code. */
export async function runSpargeOnDevice(
  args: SpargeExampleArgs,
  plan: SpargePlan,
  inputs: SpargeExampleInputs,
  cpu: SpargeCpuReference | undefined,
  compiler: Compiler,
  log: Log,
): Promise<number> {
  const p = plan.attention;
  const device = Device.open(0);
  const runner = new SpargeRunner({ device, compiler });
  const buffers: DeviceBuffer[] = [];
  const keep = (b: DeviceBuffer): DeviceBuffer => (buffers.push(b), b);
  const oElems = inputs.values.q.length;
  const lseElems = p.batch * p.nheadQ * inputs.shape.seqlenQ;
  let prepared: PreparedSparge | undefined;
  try {
    const q = keep(device.upload(inputs.bits.q));
    const k = keep(device.upload(inputs.bits.k));
    const v = keep(device.upload(inputs.bits.v));
    const o = keep(device.alloc(Math.max(1, oElems) * 2).fill(0xff));
    const problem = spargeProblemFromArgs(args);
    const lse = problem.lse === true ? keep(device.alloc(Math.max(1, lseElems) * 4).fill(0xff)) : undefined;
    prepared = await runner.prepare(problem, { q, k, v, o, ...(lse ? { lse } : {}) });
    const first = firstRun(device, prepared, plan, o, lse, oElems, lseElems);
    logTimes(args, plan, device, prepared, first, log);
    const gpuBlockMap: SpargeBlockMap = {
      batch: p.batch,
      nhead: p.nheadQ,
      qBlocks: p.qBlocks,
      kBlocks: p.kBlocks,
      map: first.gpuMap.map.subarray(0, p.batch * p.nheadQ * p.qBlocks * p.kBlocks),
    };
    if (args.get('print_sparsity')) logSparsity(plan, inputs, gpuBlockMap, 'GPU block map', log);
    if (cpu === undefined) return 0;
    return validateOnDevice(plan, inputs, cpu, first, gpuBlockMap, log);
  } finally {
    device.synchronize();
    prepared?.dispose();
    for (const b of buffers) b.dispose();
  }
}

/** One run first: what it produced is validated, and the PV counters then hold exactly one launch. */
function firstRun(
  device: Device,
  prepared: PreparedSparge,
  plan: SpargePlan,
  o: DeviceBuffer,
  lse: DeviceBuffer | undefined,
  oElems: number,
  lseElems: number,
): SpargeFirstRun {
  prepared.launch();
  device.synchronize();
  const gpuMap = prepared.readBlockMap();
  const sparsity = prepared.achievedSparsity();
  const pv = prepared.pvStats();
  const oBytes = o.copyToHost();
  const oHost = decodeArray(plan.attention.dtype, new Uint16Array(oBytes.buffer, oBytes.byteOffset, oElems));
  const lseBytes = lse?.copyToHost();
  const lseHost = lseBytes === undefined ? undefined : new Float32Array(lseBytes.buffer, lseBytes.byteOffset, lseElems);
  return { gpuMap, sparsity, pv, oHost, lseHost };
}

/** Times the block map and the attention (median after warmup), then logs times, TFLOP/s, the GPU sparsity and the PV-skip counts. */
function logTimes(
  args: SpargeExampleArgs,
  plan: SpargePlan,
  device: Device,
  prepared: PreparedSparge,
  first: SpargeFirstRun,
  log: Log,
): void {
  const p = plan.attention;
  const timing = { warmup: args.get('warmup'), repeat: args.get('repeat') };
  const mapTimes = summarizeTimes(timeLaunches(device, prepared.launchBlockMap, timing));
  const attnTimes = summarizeTimes(timeLaunches(device, prepared.launchAttention, timing));
  const flops = spargeDenseFlops(plan);
  const after = `median of ${mapTimes.n} after ${timing.warmup} warmup`;
  log(
    `${device.name}: block map ${mapTimes.median.toFixed(4)} ms, attention ` +
      `${attnTimes.median.toFixed(4)} ms (${after}); total ` +
      `${(mapTimes.median + attnTimes.median).toFixed(4)} ms`,
  );
  log(
    `dense-equivalent ${(flops / 1e12).toFixed(3)} TFLOP` +
      `${plan.params.isCausal ? ' (causal: halved)' : ''}: attention ` +
      `${tflops(flops, attnTimes.median).toFixed(1)} TFLOP/s, with the block map ` +
      `${tflops(flops, mapTimes.median + attnTimes.median).toFixed(1)} TFLOP/s`,
  );
  log(`achieved sparsity (GPU): ${first.sparsity.toFixed(4)}`);
  if (p.pvMode !== 'none') {
    const { pv } = first;
    const total = pv.computed + pv.skipped;
    log(
      `PV skip (${p.pvMode}): ${pv.computed} P·V tiles computed, ${pv.skipped} skipped (` +
        `${total > 0 ? ((100 * pv.skipped) / total).toFixed(1) : '0.0'}%, warpgroup tiles of one ` +
        `launch)`,
    );
  }
}

/** Both stages against the CPU references; logs each verdict and returns the exit code (0 valid, 1 not). */
function validateOnDevice(
  plan: SpargePlan,
  inputs: SpargeExampleInputs,
  cpu: SpargeCpuReference,
  first: SpargeFirstRun,
  gpuBlockMap: SpargeBlockMap,
  log: Log,
): number {
  const wrong = checkBlockMap(plan, inputs, cpu, first, log);
  // Stage 2: O and LSE against the reference computed with the map the GPU actually used.
  const ref = cpu.blockMap;
  const sameMap = gpuBlockMap.map.every((x, i) => x === ref.blockMap.map[i]);
  const attentionRef = sameMap ? cpu.attention! : spargeAttentionReference(plan, inputs.shape, cpu.attentionValues, gpuBlockMap);
  if (!sameMap) log('attention reference recomputed with the GPU block map (its excused rows differ from the CPU map)');
  const result = compareSpargeAttention(plan, cpu.attentionValues, attentionRef, first.oHost, first.lseHost);
  log(result.message);
  const ok = wrong === 0 && result.ok;
  log(`valid: ${ok ? 'yes' : 'no'}`);
  return ok ? 0 : 1;
}

/** Stage 1: the GPU map must equal the CPU's except in rows within rounding of a selection or similarity threshold; returns the wrong rows. */
function checkBlockMap(plan: SpargePlan, inputs: SpargeExampleInputs, cpu: SpargeCpuReference, first: SpargeFirstRun, log: Log): number {
  const p = plan.attention;
  const r = plan.params;
  const ref = cpu.blockMap;
  const sel = spargeSelectReference(
    {
      batch: p.batch,
      nhead: p.nheadQ,
      nheadK: p.nheadK,
      headDim: p.hdimQ,
      blockQ: r.blockQ,
      blockK: r.blockK,
      seqlenQ: inputs.shape.seqlenQ,
      seqlenK: inputs.shape.seqlenK,
      selection: r.selection,
      selectionValue: r.selectionValue,
      simthreshd1: r.simthreshd1,
      isCausal: r.isCausal,
      attentionSink: r.attentionSink,
    },
    { pooledQ: ref.pooledQ, simQ: ref.similarityQ, pooledK: ref.pooledK, simK: ref.similarityK },
  );
  const verdict = compareSpargeSelect(sel, first.gpuMap, { excuseRow: (row) => nearThreshold(plan, cpu, row) });
  log(
    `block map: ${verdict.rows} query-block rows, ${verdict.excused} differ within rounding ` +
      `of a threshold, ${verdict.wrong} wrong` +
      `${verdict.first ? `; first: ${verdict.first}` : ''}`,
  );
  return verdict.wrong;
}

/** Whether query-block row `row` (over b, h) has a Q or K similarity within rounding of its head's simthreshd1. */
function nearThreshold(plan: SpargePlan, cpu: SpargeCpuReference, row: number): boolean {
  const p = plan.attention;
  const ref = cpu.blockMap;
  const QM = p.qBlocks;
  const KM = p.kBlocks;
  const ratio = p.nheadQ / p.nheadK;
  const near = (s: number, theta: number): boolean => Math.abs(s - theta) < 1e-5;
  const bh = Math.floor(row / QM);
  const h = bh % p.nheadQ;
  const bhk = Math.floor(bh / p.nheadQ) * p.nheadK + Math.floor(h / ratio);
  const theta = plan.params.simthreshd1[h]!;
  if (near(ref.similarityQ[row]!, theta)) return true;
  for (let j = 0; j < KM; j++) if (near(ref.similarityK[bhk * KM + j]!, theta)) return true;
  return false;
}
