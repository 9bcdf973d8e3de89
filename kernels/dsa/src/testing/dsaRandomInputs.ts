// Seeded random inputs for the DSA indexer path: what the CPU specs, the GPU tests and the benchmark draw.
import type { Prng } from '@tilekit/host';
import { roundTo } from '@tilekit/numeric';
import { DsaArgumentError } from '../dsaArgumentError.ts';
import { DSA_INDEX_HEAD_DIM, DSA_PAGE_BYTES, DSA_PAGE_TOKENS, type DsaScaleFormat } from '../dsaShape.ts';
import type { DsaIndexerDecodeInput } from '../reference/dsaIndexerDecodeReference.ts';
import type { DsaIndexerPrefillInput } from '../reference/dsaIndexerPrefillReference.ts';
import { dsaQuantizeIndexKeys } from '../reference/dsaQuantizeIndexKeys.ts';
import { dsaSlotsFromBlockTable } from '../reference/dsaSlotsFromBlockTable.ts';
import { dsaWriteIndexCacheReference } from '../reference/dsaWriteIndexCacheReference.ts';

const D = DSA_INDEX_HEAD_DIM;

function checkCount(argument: string, value: number, min = 0): void {
  if (!Number.isSafeInteger(value) || value < min) throw new DsaArgumentError(argument, `must be an integer ≥ ${min}`, value);
}

function checkRate(argument: string, value: number): void {
  if (!(value >= 0 && value <= 1)) throw new DsaArgumentError(argument, 'must lie in [0, 1]', value);
}

/**
 * `count` e4m3fn bit patterns drawn uniformly from the 254 non-NaN patterns (every pattern but 0x7f and 0xff):
 * full entropy, so ±0, subnormals and ±448 all occur (q inputs of the indexer tests).
 */
export function dsaRandomE4m3Bits(count: number, rng: Prng): Uint8Array {
  checkCount('count', count);
  return Uint8Array.from({ length: count }, () => {
    const v = rng.nextInt(0, 253);
    return v >= 0x7f ? v + 1 : v;
  });
}

/**
 * [rows][heads] fp32 head weights at the indexer's magnitude: w = fp32(z · heads^-½ · 128^-½ · sq) with z ~ N(0, 1)
 * and a q scale sq = 2^u, u uniform in [−12, −4] per element (weights_proj·64^-½, then sq and the softmax
 * scale 128^-½ folded in, as DeepSeek-V3.2's indexer does).
 */
export function dsaRandomIndexWeights(rows: number, heads: number, rng: Prng): Float32Array {
  checkCount('rows', rows);
  checkCount('heads', heads, 1);
  const fold = 1 / Math.sqrt(heads) / Math.sqrt(D);
  return Float32Array.from({ length: rows * heads }, () => rng.nextNormal() * fold * 2 ** rng.nextRange(-12, -4));
}

/** Options of {@link dsaRandomIndexKeys}. */
export interface DsaRandomIndexKeysOptions {
  /** Standard deviation before the per-token factor (default 1: LayerNorm'ed, Hadamard-rotated keys). */
  readonly stddev?: number;
  /** Probability that a token is all +0 (the amax-floor path; default 0). */
  readonly zeroTokenRate?: number;
}

/**
 * [tokens][128] index keys as bf16 values in fp32: N(0, stddev²) times a per-token factor 2^v, v uniform in
 * [−2, 2] (so token amaxes vary), each rounded to bf16 (nearest even); a token is all +0 with zeroTokenRate.
 */
export function dsaRandomIndexKeys(tokens: number, rng: Prng, options: DsaRandomIndexKeysOptions = {}): Float32Array {
  const { stddev = 1, zeroTokenRate = 0 } = options;
  checkCount('tokens', tokens);
  checkRate('zeroTokenRate', zeroTokenRate);
  if (!(stddev > 0 && Number.isFinite(stddev))) throw new DsaArgumentError('stddev', 'must be positive and finite', stddev);
  const keys = new Float32Array(tokens * D);
  for (let t = 0; t < tokens; t++) {
    if (rng.nextFloat() < zeroTokenRate) continue;
    const factor = stddev * 2 ** rng.nextRange(-2, 2);
    for (let i = 0; i < D; i++) keys[t * D + i] = roundTo('bf16', rng.nextNormal() * factor);
  }
  return keys;
}

/** [batch] context lengths uniform in [minContext, maxContext]. */
export function dsaRandomContextLens(batch: number, minContext: number, maxContext: number, rng: Prng): Int32Array {
  checkCount('batch', batch, 1);
  checkCount('minContext', minContext);
  if (!Number.isSafeInteger(maxContext) || maxContext < minContext)
    throw new DsaArgumentError('maxContext', `must be an integer ≥ minContext = ${minContext}`, maxContext);
  return Int32Array.from({ length: batch }, () => rng.nextInt(minContext, maxContext));
}

/**
 * A [batch][maxPages] block table whose entries are the first batch·maxPages elements of a uniformly random
 * permutation of the pages 0 … pages − 1 (Fisher–Yates): distinct pages, in no order.
 * @throws DsaArgumentError when pages < batch·maxPages.
 */
export function dsaRandomBlockTable(batch: number, maxPages: number, rng: Prng, pages = batch * maxPages): Int32Array {
  checkCount('batch', batch, 1);
  checkCount('maxPages', maxPages, 1);
  if (!Number.isSafeInteger(pages) || pages < batch * maxPages)
    throw new DsaArgumentError('pages', `must be an integer ≥ batch·maxPages = ${batch * maxPages}`, pages);
  const order = Int32Array.from({ length: pages }, (_, i) => i);
  for (let i = pages - 1; i > 0; i--) {
    const j = rng.nextInt(0, i);
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  return order.slice(0, batch * maxPages);
}

/** Options of {@link dsaRandomTopkLogits}. */
export interface DsaRandomTopkLogitsOptions {
  /** Distinct finite values per row, drawn N(0, 1) in fp32: few values → many ties (default 16). */
  readonly distinctValues?: number;
  /** Probability that a position starts a run of 1 … 64 −∞ (default 0.02). */
  readonly negInfRunRate?: number;
  /** Probability that a finite position is NaN instead (default 0). */
  readonly nanRate?: number;
}

/** One row's pool of distinct fp32 values. */
function valuePool(count: number, rng: Prng): Float32Array {
  const pool = new Set<number>();
  while (pool.size < count) pool.add(Math.fround(rng.nextNormal()));
  return Float32Array.from(pool);
}

/** Fills one row: −∞ runs, NaNs, and values from the pool (ties by construction). */
function fillTopkRow(row: Float32Array, rng: Prng, pool: Float32Array, negInfRunRate: number, nanRate: number): void {
  for (let p = 0; p < row.length; p++) {
    if (rng.nextFloat() < negInfRunRate) {
      const end = Math.min(row.length, p + rng.nextInt(1, 64));
      row.fill(Number.NEGATIVE_INFINITY, p, end);
      p = end - 1;
    } else {
      row[p] = rng.nextFloat() < nanRate ? Number.NaN : pool[rng.nextInt(0, pool.length - 1)]!;
    }
  }
}

/** [rows][rowStride] fp32 logits for top-k tests: values from a small per-row pool (deliberate ties), −∞ runs, optional NaNs. */
export function dsaRandomTopkLogits(rows: number, rowStride: number, rng: Prng, options: DsaRandomTopkLogitsOptions = {}): Float32Array {
  const { distinctValues = 16, negInfRunRate = 0.02, nanRate = 0 } = options;
  checkCount('rows', rows);
  checkCount('rowStride', rowStride);
  checkCount('distinctValues', distinctValues, 1);
  checkRate('negInfRunRate', negInfRunRate);
  checkRate('nanRate', nanRate);
  const logits = new Float32Array(rows * rowStride);
  for (let r = 0; r < rows; r++) {
    fillTopkRow(logits.subarray(r * rowStride, (r + 1) * rowStride), rng, valuePool(distinctValues, rng), negInfRunRate, nanRate);
  }
  return logits;
}

/** Sizes and choices of {@link dsaRandomPrefillInput}. */
export interface DsaRandomPrefillOptions {
  readonly S: number;
  readonly H: number;
  readonly Skv: number;
  /** How the keys are quantized (default `fp32`). */
  readonly scaleFormat?: DsaScaleFormat;
  /**
   * `causal` (default): query t sits at key position Skv − S + t and sees [0, Skv − S + t + 1) (needs Skv ≥ S);
   * `random`: start uniform in [0, Skv], end uniform in [start, Skv] (empty windows included).
   */
  readonly windows?: 'causal' | 'random';
  /** Passed to {@link dsaRandomIndexKeys}. */
  readonly keys?: DsaRandomIndexKeysOptions;
}

function prefillWindows(S: number, Skv: number, kind: 'causal' | 'random', rng: Prng): [Int32Array, Int32Array] {
  if (kind === 'causal') {
    if (Skv < S) throw new DsaArgumentError('Skv', `must be ≥ S = ${S} for causal windows`, Skv);
    return [new Int32Array(S), Int32Array.from({ length: S }, (_, t) => Skv - S + t + 1)];
  }
  const start = Int32Array.from({ length: S }, () => rng.nextInt(0, Skv));
  return [start, Int32Array.from(start, (s) => rng.nextInt(s, Skv))];
}

/**
 * A prefill indexer problem: random e4m3 q ({@link dsaRandomE4m3Bits}), weights ({@link dsaRandomIndexWeights}),
 * keys ({@link dsaRandomIndexKeys}) quantized by {@link dsaQuantizeIndexKeys}, and windows.
 */
export function dsaRandomPrefillInput(options: DsaRandomPrefillOptions, rng: Prng): DsaIndexerPrefillInput {
  const { S, H, Skv, scaleFormat = 'fp32', windows = 'causal' } = options;
  checkCount('S', S);
  checkCount('H', H, 1);
  checkCount('Skv', Skv);
  const q = dsaRandomE4m3Bits(S * H * D, rng);
  const weights = dsaRandomIndexWeights(S, H, rng);
  const { values: k, scales: kScales } = dsaQuantizeIndexKeys(dsaRandomIndexKeys(Skv, rng, options.keys), Skv, scaleFormat);
  const [windowStart, windowEnd] = prefillWindows(S, Skv, windows, rng);
  return { q, weights, k, kScales, windowStart, windowEnd, S, H, Skv };
}

/** Sizes and choices of {@link dsaRandomDecodeInput}. */
export interface DsaRandomDecodeOptions {
  readonly B: number;
  readonly nextN: number;
  readonly H: number;
  readonly maxContext: number;
  /** How the keys are quantized (default `fp32`). */
  readonly scaleFormat?: DsaScaleFormat;
  /** Cache pages beyond B·maxPages, never referenced (default 1). */
  readonly sparePages?: number;
  /** Smallest context length drawn (default min(nextN, maxContext)); lengths are uniform in [minContext, maxContext]. */
  readonly minContext?: number;
  /** Passed to {@link dsaRandomIndexKeys}. */
  readonly keys?: DsaRandomIndexKeysOptions;
}

/** A random paged decode problem, and the keys it stored. */
export interface DsaRandomDecodeCase {
  readonly input: DsaIndexerDecodeInput;
  /** Per sequence, its [contextLens[b]][128] keys in logical order (fp32, bf16 values) before quantization. */
  readonly keys: readonly Float32Array[];
}

/** Quantizes sequence b's keys and writes them through its block table. */
function storeSequence(input: DsaIndexerDecodeInput, b: number, keys: Float32Array, scaleFormat: DsaScaleFormat): void {
  const length = input.contextLens[b]!;
  const quantized = dsaQuantizeIndexKeys(keys, length, scaleFormat);
  const positions = Int32Array.from({ length }, (_, p) => p);
  dsaWriteIndexCacheReference({
    cache: input.cache,
    ...quantized,
    slots: dsaSlotsFromBlockTable(input.blockTable, input.maxPages, b, positions),
  });
}

/**
 * A paged decode indexer problem: maxPages = ⌈maxContext / 64⌉, a cache of B·maxPages + sparePages pages that starts
 * as all 0xff bytes (e4m3 NaN values, NaN scales: a kernel that reads an unwritten slot shows NaN), a random block
 * table ({@link dsaRandomBlockTable}), random context lengths, every sequence's keys quantized and written at their
 * slots, random e4m3 q and weights.
 */
export function dsaRandomDecodeInput(options: DsaRandomDecodeOptions, rng: Prng): DsaRandomDecodeCase {
  const { B, nextN, H, maxContext, scaleFormat = 'fp32', sparePages = 1 } = options;
  checkCount('nextN', nextN, 1);
  checkCount('H', H, 1);
  checkCount('maxContext', maxContext, 1);
  checkCount('sparePages', sparePages);
  const maxPages = Math.ceil(maxContext / DSA_PAGE_TOKENS);
  const blockTable = dsaRandomBlockTable(B, maxPages, rng, B * maxPages + sparePages);
  const contextLens = dsaRandomContextLens(B, options.minContext ?? Math.min(nextN, maxContext), maxContext, rng);
  const cache = new Uint8Array((B * maxPages + sparePages) * DSA_PAGE_BYTES).fill(0xff);
  const q = dsaRandomE4m3Bits(B * nextN * H * D, rng);
  const weights = dsaRandomIndexWeights(B * nextN, H, rng);
  const input: DsaIndexerDecodeInput = { q, weights, cache, blockTable, maxPages, contextLens, B, nextN, H, maxContext };
  const keys = Array.from(contextLens, (length) => dsaRandomIndexKeys(length, rng, options.keys));
  keys.forEach((k, b) => storeSequence(input, b, k, scaleFormat));
  return { input, keys };
}
