// example_sparge: plans the Sparge attention the flags describe (the block-map kernels: K mean,
// pooling, selection; the sparse attention instance), compiles every kernel the run uses and
// prints its resources, optionally computes the CPU references of both stages (-v=1) and the
// block-sparsity report (-print_sparsity=1), and on a GPU runs, validates and times the two stages.
// Without a CUDA device it says so and exits 0 after the CPU part.
import { attentionFwdTolerance } from '@tilekit/fmha';
import { ArgParseError, ArgParser, flagErrorOf, formatTable, randomBits16, summarizeTimes, tflops, type ParsedArgs } from '@tilekit/host';
import { FMHA_FWD_COMPILE_FLAGS } from '@tilekit/kernel-fmha-fwd';
import {
  checkSpargePoolProblem,
  compareSpargeSelect,
  planSparge,
  SPARGE_POOL_COMPILE_FLAGS,
  SPARGE_SELECT_COMPILE_FLAGS,
  spargeBlockMapReference,
  spargeCausalBlockAllowed,
  spargeDequantizeBlocksInt8,
  spargeMaskedAttentionReference,
  spargePoolInstancesFor,
  spargePvSkipAttentionReference,
  spargeQuantizeQkInt8,
  spargeRelativeL1,
  SpargeRunner,
  spargeSelectInstanceFor,
  spargeSelectReference,
  spargeSyntheticInputs,
  SpargeArgumentError,
  type SpargeAttentionResult,
  type SpargeBlockMap,
  type SpargeBlockMapResult,
  type SpargePerHead,
  type SpargePlan,
  type SpargeProblem,
  type SpargeShape,
} from '@tilekit/kernel-sparge';
import { ArgumentError, decodeArray, encodeArray } from '@tilekit/numeric';
import {
  compileInstance,
  Device,
  NvccCompiler,
  probe,
  timeLaunches,
  type Compiler,
  type CompilableInstance,
  type DeviceBuffer,
} from '@tilekit/runtime';

/** The example's flags (the CK port's spelling: `-key=value`, `-?` for help). */
export const spargeParser = new ArgParser(
  'example_sparge',
  'Sparge attention: block-map prediction (K smoothing, pooling, self-similarity, top-k or ' +
    'CDF selection) + block-sparse FMHA (vsa / jenga) with optional PV skip, on sm_90a',
)
  .choice(
    'pipeline',
    'vsa',
    ['vsa', 'jenga'],
    'sparse attention pipeline: vsa (delta LUT of visited key blocks) or jenga (one-hot block map)',
  )
  .int('b', 1, 'batch size', { min: 1 })
  .int('h', 2, 'query heads', { min: 1 })
  .int('h_k', 0, 'key/value heads (0: = h; must divide h)', { min: 0 })
  .int('s', 1024, 'query rows', { min: 1 })
  .int('s_k', 0, 'key rows (0: = s; synthetic inputs need = s)', { min: 0 })
  .int('d', 128, 'head dim of Q, K and V (64, 128)', { min: 1 })
  .string(
    'topk',
    '',
    'fraction of key blocks kept per query block, in (0, 1]; one value or one per head, comma-separated (default 0.4 unless -cdfthreshd is given)',
    perHeadCheck('topk'),
  )
  .string(
    'cdfthreshd',
    '',
    'pooled-softmax mass kept per query block, in [0, 1]; one value or one per head (exclusive with -topk)',
    perHeadCheck('cdfthreshd'),
  )
  .string(
    'simthreshd1',
    '',
    'self-similarity threshold: blocks at or below it are always computed; one value or one per head (default -0.1 with topk, 0.6 with cdfthreshd)',
    perHeadCheck('simthreshd1'),
  )
  .choice(
    'pv_mode',
    'none',
    ['none', 'warp', 'block'],
    'PV skip vote: none, warp (per 16 rows, the paper), block (the whole query block, upstream)',
  )
  .string(
    'pv_threshold',
    '50',
    'PV skip threshold in log2 units (≥ 0, inf: never skip); one value or one per head',
    perHeadCheck('pv_threshold'),
  )
  .bool('causal', false, 'top-left causal attention')
  .bool('smooth_k', true, 'subtract the mean of K before pooling')
  .bool('sink', true, 'attention sink: every query block visits key block 0')
  .bool('int8', false, 'int8 Q·Kᵀ with per-block scales')
  .bool('v', false, 'validate against the CPU references (O(s²) per head in float64: use small shapes)')
  .bool('print_sparsity', false, 'print the achieved sparsity (per head when h ≤ 8) and the histogram of visited blocks per query block')
  .choice('prec', 'fp16', ['fp16', 'bf16'], 'data type of Q, K, V and O')
  .int('seed', 1, 'seed of the inputs')
  .int('warmup', 5, 'untimed runs first', { min: 0 })
  .int('repeat', 20, 'timed runs (median reported)', { min: 1 })
  .choice(
    'inputs',
    'synthetic',
    ['synthetic', 'uniform'],
    'synthetic: inputs with locality (spargeSyntheticInputs), so blocks really are sparse; uniform: uniform [-1, 1)',
  );

type SpargeFlags = typeof spargeParser extends ArgParser<infer T> ? T : never;
/** The parsed command line of the example. */
export type SpargeExampleArgs = ParsedArgs<SpargeFlags>;

/** The topk of the CK port when neither -topk nor -cdfthreshd is given. */
export const SPARGE_EXAMPLE_DEFAULT_TOPK = 0.4;

/** The argument a library error names → the flag it came from (see host's `flagErrorOf`; `[i]` suffixes fall back to the array). */
export const SPARGE_FLAG_OF: Readonly<Record<string, keyof SpargeFlags>> = Object.freeze({
  'problem.dtype': 'prec',
  'problem.batch': 'b',
  'problem.nheadQ': 'h',
  'problem.nheadK': 'h_k',
  'problem.hdimQ': 'd',
  'problem.seqlenQ': 's',
  'problem.seqlenK': 's_k',
  'shape.batch': 'b',
  'shape.nhead': 'h',
  'shape.nheadK': 'h_k',
  'shape.seqlenQ': 's',
  'shape.seqlenK': 's_k',
  'shape.headDim': 'd',
  nhead: 'h',
  headDim: 'd',
  pipeline: 'pipeline',
  pvMode: 'pv_mode',
  topk: 'topk',
  'topk/cdfthreshd': 'topk',
  cdfthreshd: 'cdfthreshd',
  simthreshd1: 'simthreshd1',
  pvThreshold: 'pv_threshold',
});

/**
 * A flag whose value broke a library rule: the one-line message names the flag (`-topk=1.5: topk:
 * must be in (0, 1] …`) and `cause` keeps the library's typed error (SpargeArgumentError,
 * FmhaFwdArgumentError, …). runCli prints it and exits 2.
 */
export class SpargeFlagError extends ArgParseError {
  override readonly cause: ArgumentError;

  constructor(args: SpargeExampleArgs, error: ArgumentError) {
    const asFlag = flagErrorOf(args, error, SPARGE_FLAG_OF);
    super(asFlag.flag, asFlag.message);
    this.cause = error;
  }
}

/** The parse-time check of a per-head flag: its text must read as `parsePerHead` reads it (ranges are the library's, later). */
function perHeadCheck(flag: PerHeadFlag): (text: string) => void {
  return (text) => void parsePerHead(flag, text);
}

/** The flags that take one number or one per head. */
type PerHeadFlag = 'topk' | 'cdfthreshd' | 'simthreshd1' | 'pv_threshold';

/**
 * A per-head flag value: one number (every head) or a comma-separated list (one per head; its
 * length is checked against -h by the hyperparameter module). `inf` / `infinity` read as +∞.
 * The empty string is "not given" (undefined).
 * @throws ArgParseError naming the flag for an element that is not a number.
 */
export function parsePerHead(flag: PerHeadFlag, text: string): SpargePerHead | undefined {
  if (text.trim() === '') return undefined;
  const values = text.split(',').map((t) => {
    const s = t.trim().toLowerCase();
    const v = s === 'inf' || s === '+inf' || s === 'infinity' ? Infinity : s === '' ? NaN : Number(s);
    if (Number.isNaN(v))
      throw new ArgParseError(`-${flag}`, `-${flag}=${text}: expected a number or a comma-separated list of numbers (one per head)`);
    return v;
  });
  return values.length === 1 ? values[0]! : values;
}

/**
 * The Sparge problem the flags describe (batch mode, packed bhsd, LSE written for validation).
 * Exactly one of -topk / -cdfthreshd is passed on; with neither written, topk = 0.4. Range and
 * per-head-length rules are the library's (planSparge throws SpargeArgumentError for them).
 * @throws ArgParseError for malformed values (the parser already rejects them, with bounds such as -repeat ≥ 1).
 */
export function spargeProblemFromArgs(args: SpargeExampleArgs): SpargeProblem {
  const cdf = parsePerHead('cdfthreshd', args.get('cdfthreshd'));
  const topk = args.given('topk') ? parsePerHead('topk', args.get('topk')) : cdf === undefined ? SPARGE_EXAMPLE_DEFAULT_TOPK : undefined;
  const simthreshd1 = parsePerHead('simthreshd1', args.get('simthreshd1'));
  const pvThreshold = parsePerHead('pv_threshold', args.get('pv_threshold'));
  return {
    dtype: args.get('prec'),
    batch: args.get('b'),
    nheadQ: args.get('h'),
    ...(args.get('h_k') !== 0 ? { nheadK: args.get('h_k') } : {}),
    hdimQ: args.get('d'),
    seqlenQ: args.get('s'),
    seqlenK: args.get('s_k') !== 0 ? args.get('s_k') : args.get('s'),
    // int8 logits are relative to the smoothed K: the runner offers no LSE then (it would be off by q·km·scale).
    lse: !(args.get('int8') && args.get('smooth_k')),
    pipeline: args.get('pipeline'),
    pvMode: args.get('pv_mode'),
    params: {
      ...(topk !== undefined ? { topk } : {}),
      ...(cdf !== undefined ? { cdfthreshd: cdf } : {}),
      ...(simthreshd1 !== undefined ? { simthreshd1 } : {}),
      ...(pvThreshold !== undefined ? { pvThreshold } : {}),
      isCausal: args.get('causal'),
      smoothK: args.get('smooth_k'),
      attentionSink: args.get('sink'),
      int8: args.get('int8'),
    },
  };
}

/**
 * Plans the flags' problem (planSparge: hyperparameters, shape, pipeline, PV mode, instance).
 * @throws ArgParseError for malformed flags; SpargeArgumentError / FmhaFwdArgumentError (typed,
 * naming the argument and the rule) for values that make no Sparge problem.
 */
export function planSpargeExample(args: SpargeExampleArgs): SpargePlan {
  return planSparge(spargeProblemFromArgs(args));
}

/** One kernel a run launches, with its role and the nvcc flags its launcher compiles it with. */
export interface SpargeExampleKernel {
  readonly role: string;
  readonly instance: CompilableInstance;
  readonly flags: readonly string[];
  /** Dynamic shared memory of its launch in this problem (bytes). */
  readonly dynamicSharedBytes: number;
}

/**
 * The kernels a plan launches, in launch order: the K-mean partial pass (with smoothing), the
 * K-mean finalize pass, the pooling instance(s) of the 128-row blocks, the selection instance for
 * the problem's key-block count, then the sparse attention instance.
 */
export function spargeExampleKernels(plan: SpargePlan): SpargeExampleKernel[] {
  const p = plan.attention;
  const pool = checkSpargePoolProblem({
    dtype: p.dtype,
    headDim: p.hdimQ,
    batch: p.batch,
    nhead: p.nheadQ,
    nheadK: p.nheadK,
    blockQ: plan.params.blockQ,
    blockK: plan.params.blockK,
    seqlenQ: p.mode === 'batch' ? p.seqlenQ : 0,
    seqlenK: p.mode === 'batch' ? p.seqlenK : 0,
    smoothK: plan.params.smoothK,
    int8: plan.params.int8,
  });
  const set = spargePoolInstancesFor(pool);
  const out: SpargeExampleKernel[] = [];
  const add = (role: string, instance: CompilableInstance, flags: readonly string[], dynamicSharedBytes: number): void => {
    if (!out.some((k) => k.instance.name === instance.name)) out.push({ role, instance, flags, dynamicSharedBytes });
  };
  if (plan.params.smoothK) add('block map: K mean (partial sums)', set.keyMeanPartial, SPARGE_POOL_COMPILE_FLAGS, 0);
  add('block map: K mean (finalize)', set.keyMeanFinalize, SPARGE_POOL_COMPILE_FLAGS, 0);
  const samePool = set.poolK.name === set.poolQ.name;
  add(samePool ? 'block map: pool K and Q' : 'block map: pool K', set.poolK, SPARGE_POOL_COMPILE_FLAGS, 0);
  add('block map: pool Q', set.poolQ, SPARGE_POOL_COMPILE_FLAGS, 0);
  const select = spargeSelectInstanceFor(p.hdimQ, pool.kBlocksMax);
  add(
    'block map: select',
    select,
    SPARGE_SELECT_COMPILE_FLAGS,
    select.launch(p.batch, p.nheadQ, pool.qBlocksMax, pool.kBlocksMax).sharedBytes,
  );
  add(`attention (${p.pipeline})`, plan.instance, FMHA_FWD_COMPILE_FLAGS, plan.instance.sharedBytes);
  return out;
}

/** A one-line description of a planned problem. */
export function formatSpargeProblem(plan: SpargePlan): string {
  const p = plan.attention;
  const r = plan.params;
  const per = (xs: readonly number[]): string => (xs.every((x) => x === xs[0]) ? String(xs[0]) : `[${xs.join(',')}]`);
  const seq = p.mode === 'batch' ? `${p.seqlenQ}x${p.seqlenK}` : 'group';
  return [
    `${p.dtype} ${p.pipeline} b${p.batch} h${p.nheadQ}${p.nheadK !== p.nheadQ ? `/${p.nheadK}` : ''} s${seq} d${p.hdimQ}`,
    `${r.selection === 'topk' ? 'topk' : 'cdfthreshd'} ${per(r.selectionValue)}, simthreshd1 ${per(r.simthreshd1)}`,
    `pv_mode ${p.pvMode}${p.pvMode !== 'none' ? ` (threshold ${per(r.pvThreshold)})` : ''}`,
    `causal ${r.isCausal ? 1 : 0}, smooth_k ${r.smoothK ? 1 : 0}, sink ${r.attentionSink ? 1 : 0}, int8 ${r.int8 ? 1 : 0}`,
    `blocks ${r.blockQ}x${r.blockK} (grid ${p.qBlocks}x${p.kBlocks})`,
  ].join(', ');
}

/** The dense-equivalent FLOPs of the attention: 4·b·h·sq·sk·d, halved when causal. */
export function spargeDenseFlops(plan: SpargePlan): number {
  const p = plan.attention;
  const sq = p.mode === 'batch' ? p.seqlenQ : 0;
  const sk = p.mode === 'batch' ? p.seqlenK : 0;
  return (4 * p.batch * p.nheadQ * sq * sk * p.hdimQ) / (plan.params.isCausal ? 2 : 1);
}

/** The example's inputs: 16-bit codes (what the GPU reads) and their decoded values (what the references read). */
export interface SpargeExampleInputs {
  readonly shape: Required<SpargeShape>;
  readonly bits: { readonly q: Uint16Array; readonly k: Uint16Array; readonly v: Uint16Array };
  readonly values: { readonly q: Float64Array; readonly k: Float64Array; readonly v: Float64Array };
}

/**
 * Seeded inputs for a plan: `synthetic` (spargeSyntheticInputs, rounded to the dtype: locality, so
 * sparsity is real; needs sq = sk and hk = h) or `uniform` ([-1, 1), Q/K/V from seed, seed+1, seed+2).
 * @throws SpargeArgumentError naming `shape.seqlenK` / `shape.nheadK` when synthetic inputs cannot be drawn.
 */
export function spargeExampleInputs(plan: SpargePlan, kind: 'synthetic' | 'uniform', seed: number): SpargeExampleInputs {
  const p = plan.attention;
  const sq = p.mode === 'batch' ? p.seqlenQ : 0;
  const sk = p.mode === 'batch' ? p.seqlenK : 0;
  const shape = { batch: p.batch, nhead: p.nheadQ, nheadK: p.nheadK, seqlenQ: sq, seqlenK: sk, headDim: p.hdimQ };
  let bits: SpargeExampleInputs['bits'];
  if (kind === 'synthetic') {
    if (sk !== sq)
      throw new SpargeArgumentError(
        'shape.seqlenK',
        `must equal seqlenQ = ${sq} for synthetic (self-attention) inputs; use -inputs=uniform`,
        sk,
      );
    if (p.nheadK !== p.nheadQ)
      throw new SpargeArgumentError('shape.nheadK', `must equal nhead = ${p.nheadQ} for synthetic inputs; use -inputs=uniform`, p.nheadK);
    const syn = spargeSyntheticInputs(shape, { seed, roundTo: p.dtype });
    bits = { q: encodeArray(p.dtype, syn.q), k: encodeArray(p.dtype, syn.k), v: encodeArray(p.dtype, syn.v) };
  } else {
    const qn = p.batch * p.nheadQ * sq * p.hdimQ;
    const kn = p.batch * p.nheadK * sk * p.hdimQ;
    bits = { q: randomBits16(p.dtype, qn, seed), k: randomBits16(p.dtype, kn, seed + 1), v: randomBits16(p.dtype, kn, seed + 2) };
  }
  const values = { q: decodeArray(p.dtype, bits.q), k: decodeArray(p.dtype, bits.k), v: decodeArray(p.dtype, bits.v) };
  return { shape, bits, values };
}

/** Achieved sparsity of a block map, per head, and how many query blocks visit n key blocks. */
export interface SpargeMapSummary {
  /** 1 − visited / blocks dense attention visits (causal: the causally allowed blocks). */
  readonly sparsity: number;
  readonly perHead: readonly number[];
  /** histogram[n] = query blocks (over b, h) that visit n key blocks. */
  readonly histogram: readonly number[];
}

/** Summarises a block map [b][h][qBlocks][kBlocks] of a batch-mode problem with sq query rows. */
export function summarizeSpargeMap(
  map: SpargeBlockMap,
  blockQ: number,
  blockK: number,
  seqlenQ: number,
  isCausal: boolean,
): SpargeMapSummary {
  const { batch, nhead, qBlocks, kBlocks } = map;
  const visitedPerHead = new Float64Array(nhead);
  const densePerHead = new Float64Array(nhead);
  const histogram = new Array<number>(kBlocks + 1).fill(0);
  for (let b = 0; b < batch; b++) {
    for (let h = 0; h < nhead; h++) {
      for (let i = 0; i < qBlocks; i++) {
        const row = ((b * nhead + h) * qBlocks + i) * kBlocks;
        let n = 0;
        for (let j = 0; j < kBlocks; j++) {
          if (!isCausal || spargeCausalBlockAllowed(i, j, blockQ, blockK, seqlenQ)) densePerHead[h]!++;
          n += map.map[row + j]!;
        }
        visitedPerHead[h]! += n;
        histogram[n]!++;
      }
    }
  }
  const visited = visitedPerHead.reduce((a, x) => a + x, 0);
  const dense = densePerHead.reduce((a, x) => a + x, 0);
  return { sparsity: 1 - visited / dense, perHead: Array.from(visitedPerHead, (v, h) => 1 - v / densePerHead[h]!), histogram };
}

/** The sparsity report lines of a summary (per head only for h ≤ 8; the histogram in at most 16 buckets). */
export function formatSpargeMapSummary(s: SpargeMapSummary, source: string): string[] {
  const lines = [`achieved sparsity (${source}): ${s.sparsity.toFixed(4)}`];
  if (s.perHead.length <= 8) lines.push(`  per head: ${s.perHead.map((x, h) => `h${h} ${x.toFixed(4)}`).join(', ')}`);
  const counts = s.histogram;
  const width = Math.ceil(counts.length / 16);
  const buckets: string[] = [];
  for (let lo = 0; lo < counts.length; lo += width) {
    const hi = Math.min(counts.length, lo + width) - 1;
    const rows = counts.slice(lo, hi + 1).reduce((a, x) => a + x, 0);
    if (rows > 0) buckets.push(`${lo === hi ? lo : `${lo}-${hi}`}: ${rows}`);
  }
  lines.push(`  visited key blocks per query block (blocks: query blocks): ${buckets.join(', ')}`);
  return lines;
}

/** What the CPU references give: the predicted map and the attention computed with it. */
export interface SpargeCpuReference {
  readonly blockMap: SpargeBlockMapResult;
  readonly attention?: SpargeAttentionResult;
  /** The attention's inputs (Q, K dequantized with int8) for recomputing with another map. */
  readonly attentionValues: { readonly q: Float64Array; readonly k: Float64Array; readonly v: Float64Array };
  readonly pvModel?: { readonly computed: number; readonly skipped: number };
}

/** The CPU block map of a plan (float64, the plan's 128×128 blocks). Cheap: pooling is O(s·d), scores O(nQ·nK·d). */
export function spargeCpuBlockMap(plan: SpargePlan, inputs: SpargeExampleInputs): SpargeBlockMapResult {
  const r = plan.params;
  const params = {
    ...(r.selection === 'topk' ? { topk: r.selectionValue } : { cdfthreshd: r.selectionValue }),
    simthreshd1: r.simthreshd1,
    pvThreshold: r.pvThreshold,
    smoothK: r.smoothK,
    attentionSink: r.attentionSink,
    isCausal: r.isCausal,
    int8: r.int8,
    blockQ: r.blockQ,
    blockK: r.blockK,
  };
  return spargeBlockMapReference({ shape: inputs.shape, q: inputs.values.q, k: inputs.values.k, params });
}

/** Q and K as the attention kernel sees them: the inputs, or (int8) their per-block quantization dequantized. */
export function spargeAttentionValues(plan: SpargePlan, inputs: SpargeExampleInputs): SpargeCpuReference['attentionValues'] {
  const { q, k, v } = inputs.values;
  if (!plan.params.int8) return { q, k, v };
  const s = inputs.shape;
  const quantized = spargeQuantizeQkInt8(s, q, k, plan.params.blockQ, plan.params.blockK, plan.params.smoothK);
  return {
    q: spargeDequantizeBlocksInt8(quantized.q, s.batch, s.nhead, s.seqlenQ, s.headDim),
    k: spargeDequantizeBlocksInt8(quantized.k, s.batch, s.nheadK, s.seqlenK, s.headDim),
    v,
  };
}

/**
 * The attention reference of a plan with block map `blocks`: block-masked attention, or the PV-skip
 * model (16-row warp groups or the whole block, the last visited block always computed, as the
 * kernel) when pv_mode ≠ none. With `dense`, every block is on and PV skip is off (the exact
 * attention the sparse one approximates).
 */
export function spargeAttentionReference(
  plan: SpargePlan,
  shape: Required<SpargeShape>,
  values: SpargeCpuReference['attentionValues'],
  blocks: SpargeBlockMap,
  dense = false,
): SpargeAttentionResult & { readonly pvComputed?: number; readonly pvSkipped?: number } {
  const r = plan.params;
  const args = { shape, ...values, blockQ: r.blockQ, blockK: r.blockK, blocks, isCausal: r.isCausal, scale: plan.attention.scale };
  if (dense || plan.attention.pvMode === 'none') return spargeMaskedAttentionReference(args);
  return spargePvSkipAttentionReference({
    ...args,
    pvMode: plan.attention.pvMode,
    pvThreshold: r.pvThreshold,
    warpRows: 16,
    alwaysComputedTail: 1,
  });
}

function maxAbs(x: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < x.length; i++) m = Math.max(m, Math.abs(x[i]!));
  return m;
}

/** Compares GPU O/LSE (decoded) with a reference; tolerance attentionFwdTolerance, widened by the PV-skip slack when skipping is modeled. */
export function compareSpargeAttention(
  plan: SpargePlan,
  values: SpargeCpuReference['attentionValues'],
  ref: SpargeAttentionResult,
  o: ArrayLike<number>,
  lse: ArrayLike<number> | undefined,
): { readonly ok: boolean; readonly message: string } {
  const p = plan.attention;
  const sk = p.mode === 'batch' ? p.seqlenK : 0;
  const tol = attentionFwdTolerance({
    dtype: p.dtype,
    seqlenK: sk,
    hdimQ: p.hdimQ,
    scale: p.scale,
    maxAbsQ: maxAbs(values.q),
    maxAbsK: maxAbs(values.k),
    maxAbsV: maxAbs(values.v),
  });
  const modeled = p.pvMode !== 'none' && plan.params.pvThreshold.some((t) => t !== Infinity);
  // The GPU's fp32 vote may differ from the float64 model only where the skipped weights are ≤ 2^−threshold of the row max.
  const slack = modeled ? Math.max(...plan.params.pvThreshold.map((t) => 2 ** -t)) * maxAbs(values.v) * p.kBlocks : 0;
  const d = p.hdimQ;
  let bad = 0;
  let first = '';
  let worstO = 0;
  let worstL = 0;
  for (let r = 0; r < ref.lse.length; r++) {
    const wantL = ref.lse[r]!;
    const gotL = lse === undefined ? wantL : lse[r]!;
    const okL = wantL === -Infinity ? gotL === -Infinity : Math.abs(gotL - wantL) <= tol.lse.atol + tol.lse.rtol * Math.abs(wantL) + slack;
    if (wantL !== -Infinity) worstL = Math.max(worstL, Number.isNaN(gotL) ? Infinity : Math.abs(gotL - wantL));
    if (!okL) {
      bad++;
      first ||= `LSE[row ${r}] = ${gotL}, reference ${wantL}`;
    }
    for (let e = 0; e < d; e++) {
      const want = ref.o[r * d + e]!;
      const err = Math.abs(o[r * d + e]! - want);
      worstO = Math.max(worstO, Number.isNaN(err) ? Infinity : err);
      if (!(err <= tol.o.atol + tol.o.rtol * Math.abs(want) + slack)) {
        bad++;
        first ||= `O[row ${r} d${e}] = ${o[r * d + e]}, reference ${want}`;
      }
    }
  }
  const message = `O/LSE: ${ref.o.length} + ${ref.lse.length} values, max |err| O ${worstO.toExponential(2)} (atol ${tol.o.atol.toExponential(2)}, rtol ${tol.o.rtol.toExponential(2)}${slack > 0 ? `, PV-skip slack ${slack.toExponential(2)}` : ''}), LSE ${worstL.toExponential(2)}; ${bad} outside${first ? `; first: ${first}` : ''}`;
  return { ok: bad === 0, message };
}

/** Compiles `kernels` (through the compiler's cache), logging progress, and returns the resources table. */
export async function compileSpargeExampleKernels(
  kernels: readonly SpargeExampleKernel[],
  compiler: Compiler,
  log: (line: string) => void,
): Promise<string> {
  const rows: (string | number | boolean)[][] = [];
  for (const [n, k] of kernels.entries()) {
    const started = performance.now();
    log(`compiling [${n + 1}/${kernels.length}] ${k.instance.name} (${k.role}) ...`);
    const compiled = await compileInstance(k.instance, compiler, k.flags);
    const r = compiled.resources;
    if (!compiled.cached) log(`  compiled in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    rows.push([
      k.instance.name,
      k.role,
      compiled.arch,
      r.registers,
      r.sharedBytes,
      k.dynamicSharedBytes,
      `${r.spillStores}/${r.spillLoads}`,
      r.stackFrame,
      compiled.cached,
    ]);
  }
  return formatTable(
    ['kernel', 'role', 'arch', 'registers', 'static smem (B)', 'dynamic smem (B)', 'spills st/ld (B)', 'stack (B)', 'cached'],
    rows,
  );
}

/**
 * Runs the example; `log` receives each output line. Returns the exit code: 0 on success (also
 * without a GPU), 1 when validation fails. Bad flags throw SpargeFlagError / ArgParseError (runCli: exit 2).
 */
export async function runSpargeExample(args: SpargeExampleArgs, log: (line: string) => void = console.log): Promise<number> {
  let plan: SpargePlan;
  let inputs: SpargeExampleInputs;
  try {
    plan = planSpargeExample(args);
    inputs = spargeExampleInputs(plan, args.get('inputs'), args.get('seed'));
  } catch (error) {
    if (error instanceof ArgumentError && !(error instanceof ArgParseError)) throw new SpargeFlagError(args, error);
    throw error;
  }
  const p = plan.attention;
  const r = plan.params;
  log(`example_sparge: ${formatSpargeProblem(plan)}, scale ${p.scale}, ${args.get('inputs')} inputs (seed ${args.get('seed')})`);
  const compiler = new NvccCompiler();
  log(await compileSpargeExampleKernels(spargeExampleKernels(plan), compiler, log));

  const validate = args.get('v');
  let cpuMap: SpargeBlockMapResult | undefined;
  if (validate || args.get('print_sparsity')) {
    const started = performance.now();
    cpuMap = spargeCpuBlockMap(plan, inputs);
    log(`CPU block map (fp64): sparsity ${cpuMap.achievedSparsity.toFixed(4)} in ${(performance.now() - started).toFixed(1)} ms`);
  }
  let cpu: SpargeCpuReference | undefined;
  if (validate && cpuMap !== undefined) {
    log(
      `warning: the CPU attention reference is O(s²·d) per head in float64 (here ` +
        `${(spargeDenseFlops(plan) / 2 / 1e9).toFixed(2)} G multiply-adds for each of the sparse ` +
        `and the dense reference): use small shapes such as -s=256 .. 2048`,
    );
    const values = spargeAttentionValues(plan, inputs);
    let started = performance.now();
    const attention = spargeAttentionReference(plan, inputs.shape, values, cpuMap.blockMap);
    const sparseMs = performance.now() - started;
    started = performance.now();
    const all: SpargeBlockMap = { ...cpuMap.blockMap, map: new Uint8Array(cpuMap.blockMap.map.length).fill(1) };
    const dense = spargeAttentionReference(plan, inputs.shape, inputs.values, all, true);
    const denseMs = performance.now() - started;
    const pv = attention.pvComputed !== undefined ? { computed: attention.pvComputed, skipped: attention.pvSkipped! } : undefined;
    cpu = { blockMap: cpuMap, attention, attentionValues: values, ...(pv ? { pvModel: pv } : {}) };
    log(
      `CPU sparse attention (fp64, predicted map${pv ? `, PV-skip model ${p.pvMode}` : ''}): ` +
        `${sparseMs.toFixed(0)} ms; dense attention ${denseMs.toFixed(0)} ms`,
    );
    log(
      `CPU reference: sparsity ${cpuMap.achievedSparsity.toFixed(4)}, relative L1 vs dense ` +
        `attention ${spargeRelativeL1(attention.o, dense.o).toExponential(3)}` +
        `${r.int8 ? ' (int8 Q·Kᵀ included)' : ''}`,
    );
    if (pv) log(`CPU PV-skip model: ${pv.computed} (block, vote group) P·V products computed, ${pv.skipped} skipped`);
  }

  const probed = probe();
  if (!(probed.driver && probed.deviceCount > 0)) {
    if (args.get('print_sparsity') && cpuMap !== undefined)
      for (const line of formatSpargeMapSummary(
        summarizeSpargeMap(cpuMap.blockMap, r.blockQ, r.blockK, inputs.shape.seqlenQ, r.isCausal),
        'CPU block map',
      ))
        log(line);
    log(
      `no CUDA device found (${probed.reason ?? 'the driver reports no devices'}): the kernels ` +
        `were generated and compiled${cpu ? ' and the CPU references computed' : ''}; nothing ` +
        `ran on a GPU.`,
    );
    return 0;
  }
  return runOnDevice(args, plan, inputs, cpu, compiler, log);
}

async function runOnDevice(
  args: SpargeExampleArgs,
  plan: SpargePlan,
  inputs: SpargeExampleInputs,
  cpu: SpargeCpuReference | undefined,
  compiler: Compiler,
  log: (line: string) => void,
): Promise<number> {
  const p = plan.attention;
  const r = plan.params;
  const device = Device.open(0);
  const runner = new SpargeRunner({ device, compiler });
  const buffers: DeviceBuffer[] = [];
  const keep = (b: DeviceBuffer): DeviceBuffer => (buffers.push(b), b);
  const oElems = inputs.values.q.length;
  const lseElems = p.batch * p.nheadQ * inputs.shape.seqlenQ;
  let prepared: Awaited<ReturnType<SpargeRunner['prepare']>> | undefined;
  try {
    const q = keep(device.upload(inputs.bits.q));
    const k = keep(device.upload(inputs.bits.k));
    const v = keep(device.upload(inputs.bits.v));
    const o = keep(device.alloc(Math.max(1, oElems) * 2).fill(0xff));
    const problem = spargeProblemFromArgs(args);
    const lse = problem.lse === true ? keep(device.alloc(Math.max(1, lseElems) * 4).fill(0xff)) : undefined;
    prepared = await runner.prepare(problem, { q, k, v, o, ...(lse ? { lse } : {}) });
    // One run first: what it produced is validated, and the PV counters then hold exactly one launch.
    prepared.launch();
    device.synchronize();
    const gpuMap = prepared.readBlockMap();
    const sparsity = prepared.achievedSparsity();
    const pv = prepared.pvStats();
    const oBytes = o.copyToHost();
    const oHost = decodeArray(p.dtype, new Uint16Array(oBytes.buffer, oBytes.byteOffset, oElems));
    const lseBytes = lse?.copyToHost();
    const lseHost = lseBytes === undefined ? undefined : new Float32Array(lseBytes.buffer, lseBytes.byteOffset, lseElems);

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
        `${r.isCausal ? ' (causal: halved)' : ''}: attention ` +
        `${tflops(flops, attnTimes.median).toFixed(1)} TFLOP/s, with the block map ` +
        `${tflops(flops, mapTimes.median + attnTimes.median).toFixed(1)} TFLOP/s`,
    );
    log(`achieved sparsity (GPU): ${sparsity.toFixed(4)}`);
    if (p.pvMode !== 'none') {
      const total = pv.computed + pv.skipped;
      log(
        `PV skip (${p.pvMode}): ${pv.computed} P·V tiles computed, ${pv.skipped} skipped (` +
          `${total > 0 ? ((100 * pv.skipped) / total).toFixed(1) : '0.0'}%, warpgroup tiles of one ` +
          `launch)`,
      );
    }
    const gpuBlockMap: SpargeBlockMap = {
      batch: p.batch,
      nhead: p.nheadQ,
      qBlocks: p.qBlocks,
      kBlocks: p.kBlocks,
      map: gpuMap.map.subarray(0, p.batch * p.nheadQ * p.qBlocks * p.kBlocks),
    };
    if (args.get('print_sparsity'))
      for (const line of formatSpargeMapSummary(
        summarizeSpargeMap(gpuBlockMap, r.blockQ, r.blockK, inputs.shape.seqlenQ, r.isCausal),
        'GPU block map',
      ))
        log(line);
    if (cpu === undefined) return 0;

    // Stage 1: the GPU map must equal the CPU's except in rows within rounding of a selection or similarity threshold.
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
    const QM = p.qBlocks;
    const KM = p.kBlocks;
    const ratio = p.nheadQ / p.nheadK;
    const near = (s: number, theta: number): boolean => Math.abs(s - theta) < 1e-5;
    const excuseRow = (row: number): boolean => {
      const bh = Math.floor(row / QM);
      const h = bh % p.nheadQ;
      const bhk = Math.floor(bh / p.nheadQ) * p.nheadK + Math.floor(h / ratio);
      const theta = r.simthreshd1[h]!;
      if (near(ref.similarityQ[row]!, theta)) return true;
      for (let j = 0; j < KM; j++) if (near(ref.similarityK[bhk * KM + j]!, theta)) return true;
      return false;
    };
    const verdict = compareSpargeSelect(sel, gpuMap, { excuseRow });
    log(
      `block map: ${verdict.rows} query-block rows, ${verdict.excused} differ within rounding ` +
        `of a threshold, ${verdict.wrong} wrong` +
        `${verdict.first ? `; first: ${verdict.first}` : ''}`,
    );

    // Stage 2: O and LSE against the reference computed with the map the GPU actually used.
    const sameMap = gpuBlockMap.map.every((x, i) => x === ref.blockMap.map[i]);
    const attentionRef = sameMap ? cpu.attention! : spargeAttentionReference(plan, inputs.shape, cpu.attentionValues, gpuBlockMap);
    if (!sameMap) log('attention reference recomputed with the GPU block map (its excused rows differ from the CPU map)');
    const result = compareSpargeAttention(plan, cpu.attentionValues, attentionRef, oHost, lseHost);
    log(result.message);
    const ok = verdict.wrong === 0 && result.ok;
    log(`valid: ${ok ? 'yes' : 'no'}`);
    return ok ? 0 : 1;
  } finally {
    device.synchronize();
    prepared?.dispose();
    for (const b of buffers) b.dispose();
  }
}
