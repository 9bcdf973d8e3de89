// Seeded sparse MLA problems (prefill and FP8-cache decode): bf16 queries and latent rows at realistic magnitudes,
// index lists with invalid entries (−1, past the KV, other negatives), optional duplicates, topk_length, sinks and
// fully empty rows. What the CPU specs and the GPU spec draw.
import type { Prng } from '@tilekit/host';
import { DsaArgumentError } from '../dsaArgumentError.ts';
import { DSA_MLA_PAGE_TOKENS } from '../dsaMlaCacheLayout.ts';
import { DSA_SPARSE_MLA_QK_DIM, DSA_SPARSE_MLA_SM_SCALE } from '../dsaSparseMlaShape.ts';
import type { DsaSparseMlaDecodeProblem, DsaSparseMlaPrefillInput } from '../reference/dsaSparseMlaReference.ts';

const DQK = DSA_SPARSE_MLA_QK_DIM;

function checkCount(argument: string, value: number, min: number): void {
  if (!Number.isSafeInteger(value) || value < min) throw new DsaArgumentError(argument, `must be an integer ≥ ${min}`, value);
}

function checkRate(argument: string, value: number): void {
  if (!(value >= 0 && value <= 1)) throw new DsaArgumentError(argument, 'must lie in [0, 1]', value);
}

/**
 * [rows][576] bf16 values N(0, 1) times a per-row factor 2^u, u uniform in [lo, hi], rounded to bf16 through float32
 * (nearest even). Latent rows use [−0.5, 0.5] (RMSNorm'ed c and RoPE'd k: magnitudes near 1); queries [−1.5, 0.5], so
 * with sm_scale 0.135 a row's scores spread with standard deviation 1.1 … 4.6: neither uniform nor one-hot softmax.
 */
export function dsaRandomSparseMlaRows(rows: number, rng: Prng, lo = -0.5, hi = 0.5): Float32Array {
  checkCount('rows', rows, 0);
  const values = new Float32Array(rows * DQK);
  const words = new Uint32Array(values.buffer);
  for (let r = 0; r < rows; r++) {
    const factor = 2 ** rng.nextRange(lo, hi);
    for (let i = r * DQK; i < (r + 1) * DQK; i++) {
      values[i] = rng.nextNormal() * factor;
      const w = words[i]!;
      words[i] = ((w + 0x7fff + ((w >>> 16) & 1)) >>> 16) << 16;
    }
  }
  return values;
}

/** How the index lists are drawn. */
export interface DsaSparseMlaIndexOptions {
  /** Probability that an entry is invalid (default 0.05). */
  readonly invalidRate?: number;
  /** Invalid values: `any` (default for the prefill: −1, −2^31, −7, the bound itself, past it, 2^31 − 1) or `minusOne` (the decode default). */
  readonly invalidValues?: 'any' | 'minusOne';
  /** Probability that an entry repeats an earlier valid entry of its row (default 0). */
  readonly duplicateRate?: number;
  /** Probability that a row is empty: all entries invalid, or topk_length 0 when topk_length is drawn (default 0). */
  readonly emptyRowRate?: number;
  /** Draw topk_length (default false): uniform in [0, topk], with topk and 0 each a fifth of the time. */
  readonly topkLength?: boolean;
  /** Draw attn_sink (default false): N(0, 1)·3 per head, every eighth head −∞ (no sink). */
  readonly sink?: boolean;
  /** Softmax scale (default DeepSeek-V3.2's 0.135234). */
  readonly smScale?: number;
}

function invalidValue(bound: number, kind: 'any' | 'minusOne', rng: Prng): number {
  if (kind === 'minusOne') return -1;
  const choices = [-1, -1, -1, -(2 ** 31), -7, bound, bound + rng.nextInt(1, 1000), 2 ** 31 - 1];
  return choices[rng.nextInt(0, choices.length - 1)]!;
}

/** `count` distinct values in [0, bound), uniformly (a partial Fisher–Yates shuffle over a sparse swap map). */
function distinct(count: number, bound: number, rng: Prng): number[] {
  const swaps = new Map<number, number>();
  return Array.from({ length: count }, (_, i) => {
    const j = rng.nextInt(i, bound - 1);
    const picked = swaps.get(j) ?? j;
    swaps.set(j, swaps.get(i) ?? i);
    return picked;
  });
}

/** One row of `topk` entries over [0, bound): distinct valid tokens (−1 padding past the bound), then invalid and duplicate entries. */
function indexRow(row: Int32Array, bound: number, o: Required<DsaSparseMlaIndexOptions>, empty: boolean, rng: Prng): void {
  const valid = distinct(Math.min(row.length, bound), bound, rng);
  for (let j = 0; j < row.length; j++) {
    if (empty || j >= valid.length || rng.nextFloat() < o.invalidRate) row[j] = invalidValue(bound, o.invalidValues, rng);
    else if (j > 0 && rng.nextFloat() < o.duplicateRate) row[j] = valid[rng.nextInt(0, j - 1)]!;
    else row[j] = valid[j]!;
  }
}

function resolveIndexOptions(o: DsaSparseMlaIndexOptions, invalidValues: 'any' | 'minusOne'): Required<DsaSparseMlaIndexOptions> {
  const full = {
    invalidRate: 0.05,
    invalidValues,
    duplicateRate: 0,
    emptyRowRate: 0,
    topkLength: false,
    sink: false,
    smScale: DSA_SPARSE_MLA_SM_SCALE,
    ...o,
  };
  checkRate('invalidRate', full.invalidRate);
  checkRate('duplicateRate', full.duplicateRate);
  checkRate('emptyRowRate', full.emptyRowRate);
  return full;
}

/** Indices [groups][rowsPerGroup][topk] and, if drawn, topk_length [groups] (an empty group: all invalid, or length 0). */
function indexLists(groups: number, rowsPerGroup: number, topk: number, bound: number, o: Required<DsaSparseMlaIndexOptions>, rng: Prng) {
  const indices = new Int32Array(groups * rowsPerGroup * topk);
  const lengths = o.topkLength ? new Int32Array(groups) : undefined;
  for (let g = 0; g < groups; g++) {
    const empty = rng.nextFloat() < o.emptyRowRate;
    if (lengths !== undefined) {
      const u = rng.nextFloat();
      lengths[g] = empty ? 0 : u < 0.2 ? topk : u < 0.4 ? 0 : rng.nextInt(0, topk);
    }
    for (let r = 0; r < rowsPerGroup; r++) {
      const at = (g * rowsPerGroup + r) * topk;
      indexRow(indices.subarray(at, at + topk), bound, o, empty && lengths === undefined, rng);
    }
  }
  return lengths === undefined ? { indices } : { indices, topkLength: lengths };
}

/** hQ attention sinks: normal with σ 3, every eighth head −∞ (no sink). */
export function dsaRandomSparseMlaSinks(hQ: number, rng: Prng): Float32Array {
  return Float32Array.from({ length: hQ }, (_, h) => (h % 8 === 7 ? Number.NEGATIVE_INFINITY : Math.fround(3 * rng.nextNormal())));
}

/** Sizes of {@link dsaRandomSparseMlaPrefillInput}, and how its indices are drawn. */
export interface DsaRandomSparseMlaPrefillOptions extends DsaSparseMlaIndexOptions {
  readonly sQ: number;
  readonly hQ: number;
  readonly sKv: number;
  readonly topk: number;
}

/**
 * A sparse prefill problem: q ({@link dsaRandomSparseMlaRows} at query magnitudes), kv (latent magnitudes), and per query
 * min(topk, sKv) distinct tokens in random order (−1 past sKv), some entries replaced by invalid values or duplicates,
 * optional topk_length (entries past it still hold valid tokens, so a kernel that ignores it fails) and sinks.
 */
export function dsaRandomSparseMlaPrefillInput(options: DsaRandomSparseMlaPrefillOptions, rng: Prng): DsaSparseMlaPrefillInput {
  const { sQ, hQ, sKv, topk } = options;
  checkCount('sQ', sQ, 1);
  checkCount('hQ', hQ, 1);
  checkCount('sKv', sKv, 1);
  checkCount('topk', topk, 1);
  const o = resolveIndexOptions(options, 'any');
  const q = dsaRandomSparseMlaRows(sQ * hQ, rng, -1.5, 0.5);
  const kv = dsaRandomSparseMlaRows(sKv, rng);
  const lists = indexLists(sQ, 1, topk, sKv, o, rng);
  return { q, kv, sQ, hQ, sKv, topk, smScale: o.smScale, ...lists, ...(o.sink ? { attnSink: dsaRandomSparseMlaSinks(hQ, rng) } : {}) };
}

/** Sizes of {@link dsaRandomSparseMlaDecodeInput}, and how its slots are drawn. */
export interface DsaRandomSparseMlaDecodeOptions extends DsaSparseMlaIndexOptions {
  readonly b: number;
  /** 1 or 2 queries per sequence. */
  readonly sQ: number;
  readonly hQ: number;
  readonly topk: number;
  /** Cache pages; slots are drawn from [0, numPages · 64). */
  readonly numPages: number;
}

/** A random decode problem and the latent rows of every cache slot (to quantize into the cache, or read directly). */
export interface DsaRandomSparseMlaDecode {
  readonly problem: DsaSparseMlaDecodeProblem;
  /** [numPages · 64][576] bf16 latent values, one row per slot. */
  readonly latent: Float32Array;
  readonly numPages: number;
}

/**
 * A sparse decode problem: q [b][sQ][hQ][576], every slot's latent row, and per query min(topk, slots) distinct slots
 * (−1 invalid entries by default), optional topk_length [b] (shared by a sequence's sQ rows) and sinks.
 */
export function dsaRandomSparseMlaDecodeInput(options: DsaRandomSparseMlaDecodeOptions, rng: Prng): DsaRandomSparseMlaDecode {
  const { b, sQ, hQ, topk, numPages } = options;
  checkCount('b', b, 1);
  checkCount('sQ', sQ, 1);
  checkCount('hQ', hQ, 1);
  checkCount('topk', topk, 1);
  checkCount('numPages', numPages, 1);
  const o = resolveIndexOptions(options, 'minusOne');
  const slots = numPages * DSA_MLA_PAGE_TOKENS;
  const q = dsaRandomSparseMlaRows(b * sQ * hQ, rng, -1.5, 0.5);
  const latent = dsaRandomSparseMlaRows(slots, rng);
  const lists = indexLists(b, sQ, topk, slots, o, rng);
  const problem = { q, b, sQ, hQ, topk, smScale: o.smScale, ...lists, ...(o.sink ? { attnSink: dsaRandomSparseMlaSinks(hQ, rng) } : {}) };
  return { problem, latent, numPages };
}
