// The dsa-indexer bench cases (issue 20): the paged decode indexer, the exact top-k alone and both back to
// back, at batch 1/32/128 × context 8K/32K/128K (next_n 1, 64 heads, top-2048, pages of 64, a random
// block table, context = L for every sequence), and the prefill indexer at 4096 queries × 32K/128K keys
// (causal windows ending at L). What each case asks the reference server for (REFERENCE_OPS.md
// dsa_indexer_decode / dsa_indexer_prefill), how it is judged, and the byte and FLOP counts of its figures.
import { DSA_INDEX_BYTES_PER_TOKEN, DSA_INDEX_HEAD_DIM, DSA_PAGE_TOKENS, DSA_TOPK_DEFAULT } from '@tilekit/kernel-dsa';
import type { SuiteCase } from '../benchSuite.ts';
import type { BaselineReply } from '../referenceProtocol.ts';
import { caseSeed } from './caseSeed.ts';

/** What a decode case times: the indexer alone, the top-k alone (over fp32 logits), or both back to back. */
export type DsaBenchStage = 'indexer' | 'topk' | 'fused';

/** A decode case: b sequences, each of context L, nextN queries each. */
export interface DsaDecodeBenchSpec {
  readonly mode: 'decode';
  readonly stage: DsaBenchStage;
  readonly b: number;
  readonly L: number;
  readonly h: number;
  readonly nextN: number;
  readonly k: number;
}

/** A prefill case: s queries against L contiguous keys, query t seeing keys [0, L − s + t + 1). */
export interface DsaPrefillBenchSpec {
  readonly mode: 'prefill';
  readonly stage: 'indexer';
  readonly s: number;
  readonly L: number;
  readonly h: number;
}

export type DsaBenchSpec = DsaDecodeBenchSpec | DsaPrefillBenchSpec;

export const DSA_BENCH_BATCHES: readonly number[] = [1, 32, 128];
export const DSA_BENCH_DECODE_CONTEXTS: readonly number[] = [8192, 32768, 131072];
export const DSA_BENCH_STAGES: readonly DsaBenchStage[] = ['indexer', 'topk', 'fused'];
export const DSA_BENCH_PREFILL_QUERIES = 4096;
export const DSA_BENCH_PREFILL_CONTEXTS: readonly number[] = [32768, 131072];
export const DSA_BENCH_HEADS = 64;

/** Bytes the server's `hbm-read` baseline reads with torch.sum: the HBM read bandwidth ours.hbmFraction divides by. */
export const DSA_HBM_READ_BYTES = 4 * 2 ** 30;

/** The server's baseline that measures the HBM read bandwidth (indexer stage of decode cases). */
export const DSA_HBM_READ_BASELINE = 'hbm-read';

/** Torch's indexer forms (REFERENCE_OPS.md), in the order their errors set the tolerance. */
export const DSA_TORCH_INDEXER_BASELINES: readonly string[] = ['torch-bf16', 'torch-fp8-rowwise', 'torch-fp8-tensorwise'];

/** Every case spec, in suite order: decode by batch, then context, then stage; then prefill by context. */
export function dsaBenchSpecs(): DsaBenchSpec[] {
  const decode = DSA_BENCH_BATCHES.flatMap((b) =>
    DSA_BENCH_DECODE_CONTEXTS.flatMap((L) =>
      DSA_BENCH_STAGES.map((stage): DsaDecodeBenchSpec => ({
        mode: 'decode',
        stage,
        b,
        L,
        h: DSA_BENCH_HEADS,
        nextN: 1,
        k: DSA_TOPK_DEFAULT,
      })),
    ),
  );
  const prefill = DSA_BENCH_PREFILL_CONTEXTS.map((L): DsaPrefillBenchSpec => ({
    mode: 'prefill',
    stage: 'indexer',
    s: DSA_BENCH_PREFILL_QUERIES,
    L,
    h: DSA_BENCH_HEADS,
  }));
  return [...decode, ...prefill];
}

/** `decode_b32_L131072_fused`, `prefill_s4096_L32768_indexer`. */
export function dsaBenchCaseName(spec: DsaBenchSpec): string {
  return spec.mode === 'decode' ? `decode_b${spec.b}_L${spec.L}_${spec.stage}` : `prefill_s${spec.s}_L${spec.L}_${spec.stage}`;
}

/** Logit rows of a decode case (b · nextN). */
export function dsaDecodeRows(spec: DsaDecodeBenchSpec): number {
  return spec.b * spec.nextN;
}

/** Pages a sequence of context L spans (the block table's width). */
export function dsaPagesOf(L: number): number {
  return Math.ceil(L / DSA_PAGE_TOKENS);
}

/**
 * Bytes the decode indexer reads: the cache of every context token (132 B: 128 e4m3 + an fp32 scale), q and
 * the weights of every row, the block table and the context lengths. The GB/s of indexer and fused cases.
 */
export function dsaDecodeBytesRead(spec: Pick<DsaDecodeBenchSpec, 'b' | 'L' | 'h' | 'nextN'>): number {
  const rows = spec.b * spec.nextN;
  return (
    spec.b * spec.L * DSA_INDEX_BYTES_PER_TOKEN + rows * spec.h * (DSA_INDEX_HEAD_DIM + 4) + spec.b * dsaPagesOf(spec.L) * 4 + spec.b * 4
  );
}

/** Bytes the top-k reads: every fp32 logit once. The GB/s of topk cases. */
export function dsaTopkBytesRead(rows: number, L: number): number {
  return rows * L * 4;
}

/** The causal windows of a prefill: query t sees keys [0, L − s + t + 1). */
export function dsaPrefillWindows(s: number, L: number): { readonly start: Int32Array; readonly end: Int32Array } {
  if (!(Number.isSafeInteger(s) && Number.isSafeInteger(L) && s >= 1 && L >= s))
    throw new RangeError(`prefill windows need 1 ≤ s ≤ L, got s ${s}, L ${L}`);
  return { start: new Int32Array(s), end: Int32Array.from({ length: s }, (_, t) => L - s + t + 1) };
}

/** Σ over queries of their window lengths: s·(L − s) + s·(s + 1)/2. */
export function dsaPrefillWindowKeys(spec: Pick<DsaPrefillBenchSpec, 's' | 'L'>): number {
  return spec.s * (spec.L - spec.s) + (spec.s * (spec.s + 1)) / 2;
}

/** The prefill indexer's FLOPs: 2 · Σ window lengths · h · 128 (one q·k product per head and key in a window). */
export function dsaPrefillFlops(spec: Pick<DsaPrefillBenchSpec, 's' | 'L' | 'h'>): number {
  return 2 * dsaPrefillWindowKeys(spec) * spec.h * DSA_INDEX_HEAD_DIM;
}

/** Bytes a prefill moves: q and weights, keys and scales, the windows read; the fp32 logits [s, L] written. */
export function dsaPrefillBytesMoved(spec: Pick<DsaPrefillBenchSpec, 's' | 'L' | 'h'>): number {
  return spec.s * spec.h * (DSA_INDEX_HEAD_DIM + 4) + spec.L * DSA_INDEX_BYTES_PER_TOKEN + spec.s * 8 + spec.s * spec.L * 4;
}

/** The params a record shows (flat): mode, stage, b, L (tokens), and the shape's other sizes. */
function recordParams(spec: DsaBenchSpec): Readonly<Record<string, string | number>> {
  if (spec.mode === 'prefill') return { mode: 'prefill', stage: spec.stage, b: 1, L: spec.L, s: spec.s, h: spec.h };
  const base = { mode: 'decode', stage: spec.stage, b: spec.b, L: spec.L, h: spec.h, nextN: spec.nextN, page: DSA_PAGE_TOKENS };
  return spec.stage === 'indexer' ? base : { ...base, k: spec.k };
}

/** The reference op and its params (REFERENCE_OPS.md). */
function referenceOf(spec: DsaBenchSpec): SuiteCase['reference'] {
  if (spec.mode === 'prefill') return { op: 'dsa_indexer_prefill', params: { s: spec.s, L: spec.L, h: spec.h, windows: 'causal' } };
  const params = { b: spec.b, L: spec.L, h: spec.h, next_n: spec.nextN, k: spec.k, page: DSA_PAGE_TOKENS, stage: spec.stage };
  return { op: 'dsa_indexer_decode', params: spec.stage === 'indexer' ? { ...params, hbm_read_bytes: DSA_HBM_READ_BYTES } : params };
}

/**
 * The suite case of a spec. Decode stages of one (b, L) share a seed, so they run on the same inputs (the topk
 * stage's logits are the indexer stage's fp32 reference). Judged outputs: the logits (fp32, with torch's bf16
 * error as the yardstick) and the selected values (exact against torch.topk's on the same logits for topk;
 * within the yardstick for fused, where our logits carry the kernel's error).
 */
export function dsaBenchSuiteCase(spec: DsaBenchSpec): SuiteCase {
  const name = dsaBenchCaseName(spec);
  const seed = caseSeed(spec.mode === 'decode' ? `decode_b${spec.b}_L${spec.L}` : name);
  const common = { name, params: recordParams(spec), reference: referenceOf(spec), seed };
  if (spec.mode === 'decode' && spec.stage === 'topk')
    return { ...common, precision: { topk_values: 'exact' }, errorBaselines: ['torch-topk', 'torch-topk-unsorted'] };
  if (spec.mode === 'decode' && spec.stage === 'fused')
    return { ...common, precision: { logits: 'fp32', topk_values: 'fp32' }, errorBaselines: DSA_TORCH_INDEXER_BASELINES };
  return { ...common, precision: { logits: 'fp32' }, errorBaselines: DSA_TORCH_INDEXER_BASELINES };
}

/** Every case of the suite. */
export const DSA_INDEXER_BENCH_CASES: readonly SuiteCase[] = dsaBenchSpecs().map(dsaBenchSuiteCase);

function param(c: SuiteCase, key: string): number {
  const value = c.params[key];
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1)
    throw new Error(`dsa-indexer case ${c.name}: params.${key} must be a positive integer, not ${String(value)}`);
  return value;
}

/** The spec a case was made from (read back from its params). */
export function dsaBenchSpecOf(c: SuiteCase): DsaBenchSpec {
  const { mode, stage } = c.params;
  if (mode === 'prefill' && stage === 'indexer') return { mode, stage, s: param(c, 's'), L: param(c, 'L'), h: param(c, 'h') };
  if (mode !== 'decode' || !DSA_BENCH_STAGES.includes(stage as DsaBenchStage))
    throw new Error(`dsa-indexer case ${c.name}: mode ${String(mode)} with stage ${String(stage)} is not a case of this suite`);
  const k = stage === 'indexer' ? DSA_TOPK_DEFAULT : param(c, 'k');
  return { mode, stage: stage as DsaBenchStage, b: param(c, 'b'), L: param(c, 'L'), h: param(c, 'h'), nextN: param(c, 'nextN'), k };
}

/** ours.gbps over the run's HBM read bandwidth (the server's hbm-read baseline's GB/s); undefined when it did not run. */
export function hbmFractionOf(oursGbps: number, baselines: Readonly<Record<string, BaselineReply>>): number | undefined {
  const read = baselines[DSA_HBM_READ_BASELINE];
  if (read === undefined || 'error' in read) return undefined;
  return typeof read.gbps === 'number' && read.gbps > 0 ? oursGbps / read.gbps : undefined;
}
