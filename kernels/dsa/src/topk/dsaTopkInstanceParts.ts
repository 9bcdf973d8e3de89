// What the two top-k kernels (DsaTopkInstance: one CTA per row; DsaTopkClusterInstance: a cluster
// per row) share: the policy fields, launch, parameters, policy checks and instance key, and the
// emitted steps both take in the same order (thread ids, the row's length, zeroing, pass-1 adds,
// voted adds, the threshold key, the narrowing branch, the output row and its padding).
import {
  add,
  bitAnd,
  bitOr,
  bool,
  cast,
  eq,
  float32,
  gt,
  index,
  instanceKey,
  int32,
  int64,
  kernelParam,
  lit,
  maxOf,
  minOf,
  mul,
  or,
  pointer,
  select,
  shl,
  shr,
  sub,
  uint32,
  type BlockBuilder,
  type Expr,
  type KernelInstanceSpec,
  type KernelParams,
  type Target,
} from '@tilekit/codegen';
import type { BlockScanSite } from '@tilekit/tile';
import { DsaArgumentError } from '../dsaArgumentError.ts';
import { DSA_TOPK_MAX } from '../dsaShape.ts';
import { DSA_TOPK_DIGIT_BITS } from './dsaRadixSelectPlan.ts';
import { emitDsaTopkHistogramAdd } from './dsaTopkHistogram.ts';
import type { DsaTopkOutput } from './dsaTopkOutput.ts';
import type { DsaTopkVector } from './dsaTopkRowSweep.ts';
import { DSA_TOPK_STATE } from './dsaTopkThresholdBin.ts';

/** Alignment slack the dynamic shared memory of a top-k kernel is requested with. */
export const DSA_TOPK_SMEM_ALIGN = 16;

/** Bins of the pass-1 histogram (the widest digit). */
export const DSA_TOPK_HIST_BINS = 2 ** DSA_TOPK_DIGIT_BITS[0]!;

/** Spare bins after the histogram: inactive lanes add to theirs (branch-free histogram adds). */
export const DSA_TOPK_SPARE_BINS = 32;

/** The policy fields every top-k instance has (each kernel names the values it takes). */
export interface DsaTopkCtaPolicy {
  /** Threads per CTA. */
  readonly threads: number;
  /** Positions per thread and chunk: 4 (16-byte loads; rowStride % 4 = 0 and 16-byte aligned logits) or 1. */
  readonly vector: DsaTopkVector;
  /** `vector`-wide chunks per thread (unroll · vector consecutive positions), all loaded before any is used. */
  readonly unroll: number;
  /** What is stored for a selected position. */
  readonly output: DsaTopkOutput;
}

/** The launch of a top-k kernel. */
export interface DsaTopkLaunch {
  readonly grid: readonly [number, number, number];
  readonly block: readonly [number, number, number];
  readonly sharedBytes: number;
}

/**
 * The parameters of a top-k kernel: logits (4 · vector-byte aligned), lengths (nullable), out,
 * row_stride in [1, maxRowStride], k, then the output hook's own.
 * @throws DsaArgumentError when the hook's parameters reuse one of these names.
 */
export function dsaTopkKernelParams(
  policy: { readonly vector: DsaTopkVector; readonly output: DsaTopkOutput },
  maxRowStride: number,
): KernelParams {
  const own = {
    logits: kernelParam.pointer(float32, { const: true, align: 4 * policy.vector }),
    lengths: kernelParam.pointer(int32, { const: true, align: 4, nullable: true }),
    out: kernelParam.pointer(int32, { align: 4 }),
    row_stride: kernelParam.i32({ range: [1, maxRowStride] }),
    k: kernelParam.i32({ range: [1, DSA_TOPK_MAX] }),
  };
  const clash = Object.keys(policy.output.params).filter((name) => Object.hasOwn(own, name));
  if (clash.length > 0) throw new DsaArgumentError('policy.output.params', 'must not reuse the kernel parameter names', clash);
  return { ...own, ...policy.output.params } as KernelParams;
}

/**
 * Checks one policy field against the values a kernel takes.
 * @throws DsaArgumentError naming `name` when `value` is not one of `allowed`.
 */
export function dsaTopkCheckOneOf(name: string, allowed: readonly number[], value: number): void {
  if (!allowed.includes(value)) throw new DsaArgumentError(name, `must be one of ${allowed.join(', ')}`, value);
}

/**
 * Checks a policy's output hook.
 * @throws DsaArgumentError naming policy.output when it is not one of the output hooks.
 */
export function dsaTopkCheckOutput(output: DsaTopkOutput | undefined): void {
  if (output?.kind !== 'index' && output?.kind !== 'pageTable')
    throw new DsaArgumentError('policy.output', 'must be an output hook (dsaTopkIndexOutput or dsaTopkPageTableOutput)', output?.kind);
}

/** Key fields of a top-k instance besides threads, vector and unroll, in name order: [config key, name tag, value]. */
export type DsaTopkKeyFields = readonly (readonly [key: string, tag: string, value: number])[];

/** What tells two top-k kernels' instance specs apart. */
export interface DsaTopkInstanceShape {
  /** The instance key's family. */
  readonly family: string;
  /** Key fields before threads, vector and unroll. */
  readonly before: DsaTopkKeyFields;
  /** Key fields after them (the output hook's kind and the target close the key). */
  readonly after: DsaTopkKeyFields;
  /** The largest row_stride the kernel serves. */
  readonly maxRowStride: number;
  /** Dynamic shared memory of a CTA. */
  readonly sharedBytes: number;
}

/** The KernelInstance spec of a (checked) top-k policy: its key, frozen policy, parameters, threads and shared memory. */
export function dsaTopkInstanceSpec<P extends DsaTopkCtaPolicy>(
  policy: P,
  target: Target,
  shape: DsaTopkInstanceShape,
): KernelInstanceSpec<P, KernelParams> {
  const values = (fields: DsaTopkKeyFields) => Object.fromEntries(fields.map(([key, , value]) => [key, value]));
  const tags = (fields: DsaTopkKeyFields) => Object.fromEntries(fields.map(([key, tag]) => [key, tag]));
  const { threads, vector, unroll } = policy;
  const key = instanceKey(
    shape.family,
    { ...values(shape.before), threads, vector, unroll, ...values(shape.after), output: policy.output.kind, target: target.name },
    { tags: { output: '', ...tags(shape.before), threads: 't', vector: 'v', unroll: 'u', ...tags(shape.after) } },
  );
  return {
    key,
    policy: Object.freeze({ ...policy }),
    target,
    params: dsaTopkKernelParams(policy, shape.maxRowStride),
    threads,
    sharedBytes: shape.sharedBytes,
  };
}

/** Emits `tid` (in [0, threads − 1]) and `lane`. */
export function emitDsaTopkThreadIds(b: BlockBuilder, t: Target, threads: number): { readonly tid: Expr; readonly lane: Expr } {
  const tid = b.let('tid', int32, cast(t.threadIdx('x'), int32), { range: [0, threads - 1] });
  const lane = b.let('lane', int32, bitAnd(tid, t.warpSize! - 1));
  return { tid, lane };
}

/** Emits the row's length: lengths[row] (row_stride when lengths is null) clamped to [0, row_stride]. */
export function emitDsaTopkRowLength(b: BlockBuilder, args: Readonly<Record<string, Expr>>, rowIndex: Expr): Expr {
  const given = b.let('given', int32, select(args['lengths']!, index(args['lengths']!, rowIndex), args['row_stride']!));
  return b.let('length', int32, minOf(maxOf(given, 0), args['row_stride']!));
}

/** Zeroes `n` int32 of shared memory (block-strided; no barrier). */
export function emitDsaTopkZero(b: BlockBuilder, site: BlockScanSite, at: Expr, n: number): void {
  b.forRange({ name: 'z', from: site.tid, to: n, step: site.threads }, (x, i) => x.assign(index(at, i), 0));
}

/** Pass 1's adds of `keys`: every candidate (key > 0) to the bin of its top digit. */
export function emitDsaTopkPass1Adds(b: BlockBuilder, hist: Expr, keys: readonly Expr[], lane: Expr): void {
  const items = keys.map((key) => ({ active: gt(key, 0), bin: shr(key, 32 - DSA_TOPK_DIGIT_BITS[0]!) }));
  emitDsaTopkHistogramAdd(b, hist, DSA_TOPK_HIST_BINS, items, lane);
}

/** Where voted adds go. */
export interface DsaTopkVoteSite {
  readonly target: Target;
  readonly hist: Expr;
  readonly lane: Expr;
}

/**
 * Adds of the keys where `inBin` holds (each flag a `name` bool) to bin `digit`, skipped by a warp
 * vote when none of them is; `also` emits more inside the vote (after the adds).
 */
export function emitDsaTopkVotedAdds(
  b: BlockBuilder,
  site: DsaTopkVoteSite,
  keys: readonly Expr[],
  name: string,
  bins: { readonly inBin: (key: Expr) => Expr; readonly digit: (key: Expr) => Expr },
  also?: (x: BlockBuilder, active: readonly Expr[]) => void,
): void {
  const active = keys.map((key) => b.let(name, bool, bins.inBin(key)));
  b.if(site.target.any(active.reduce<Expr>((s, f) => or(s, f), lit(false))), (x) => {
    const items = keys.map((key, j) => ({ active: active[j]!, bin: bins.digit(key) }));
    emitDsaTopkHistogramAdd(x, site.hist, DSA_TOPK_HIST_BINS, items, site.lane);
    also?.(x, active);
  });
}

/** The threshold and the ties taken, as the narrowing passes set them, and the count selected. */
export interface DsaTopkSelection {
  readonly threshold: Expr;
  readonly equalTaken: Expr;
  readonly selected: Expr;
}

/** Emits the threshold and equal_taken vars, `narrow` when there are more than k candidates, and `selected` = min(candidates, k). */
export function emitDsaTopkNarrowingIf(
  b: BlockBuilder,
  candidates: Expr,
  k: Expr,
  narrow: (x: BlockBuilder, threshold: Expr, equalTaken: Expr) => void,
): DsaTopkSelection {
  const threshold = b.var('threshold', uint32, cast(0, uint32));
  const equalTaken = b.var('equal_taken', int32, 0);
  b.if(gt(candidates, k), (x) => narrow(x, threshold, equalTaken));
  const selected = b.let('selected', int32, minOf(candidates, k));
  return { threshold, equalTaken, selected };
}

/**
 * The end of pass 3: the threshold key from the prefix and the last bin, the ties taken; when
 * every holder of it is kept, the threshold becomes key − 1 and no ties are counted.
 */
export function emitDsaTopkThresholdKey(
  b: BlockBuilder,
  state: Expr,
  v: { readonly prefix: Expr; readonly remaining: Expr; readonly threshold: Expr; readonly equalTaken: Expr },
  note: string,
): void {
  const key = b.let('threshold_key', uint32, bitOr(shl(v.prefix, DSA_TOPK_DIGIT_BITS[2]!), cast(index(state, DSA_TOPK_STATE.bin), uint32)));
  const taken = b.let('taken', int32, sub(v.remaining, index(state, DSA_TOPK_STATE.above)));
  b.comment(`every holder of the threshold key kept: keep the keys above key - 1 instead${note}`);
  const whole = b.let('taken_whole', bool, eq(taken, index(state, DSA_TOPK_STATE.count)));
  b.assign(v.threshold, select(whole, sub(key, 1), key));
  b.assign(v.equalTaken, select(whole, 0, taken));
}

/** Emits `name`: the int32 pointer to out[row][0]. */
export function emitDsaTopkOutRow(b: BlockBuilder, name: string, args: Readonly<Record<string, Expr>>, rowIndex: Expr): Expr {
  return b.let(name, pointer(int32), add(args['out']!, mul(cast(rowIndex, int64), cast(args['k']!, int64))));
}

/** The padding: out[row][s] = −1 for s from `from` below k, `step` apart (a comment ending in `note` first). */
export function emitDsaTopkPadding(
  b: BlockBuilder,
  args: Readonly<Record<string, Expr>>,
  rowIndex: Expr,
  slots: { readonly from: Expr; readonly step: number },
  note: string,
): void {
  b.comment(`padding: the slots past the kept positions hold -1${note}`);
  const outRow = emitDsaTopkOutRow(b, 'pad_row', args, rowIndex);
  b.forRange({ name: 's', from: slots.from, to: args['k']!, step: slots.step }, (x, s) => x.assign(index(outRow, s), -1));
}
