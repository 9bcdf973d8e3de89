// Host checks of the sparse MLA problems (prefill over a bf16 latent KV, decode over the paged FP8 latent cache) and of
// the index arrays they read: every problem is reported, each naming its argument and rule.
import { ArgumentProblems } from '@tilekit/numeric';
import { DsaArgumentError } from './dsaArgumentError.ts';
import {
  DSA_SPARSE_MLA_DECODE_SQ,
  DSA_SPARSE_MLA_HEADS,
  DSA_SPARSE_MLA_QK_DIM,
  DSA_SPARSE_MLA_TOPK_MAX,
  DSA_SPARSE_MLA_V_DIM,
} from './dsaSparseMlaShape.ts';
import { DSA_MLA_PAGE_BYTES, DSA_MLA_PAGE_STRIDE_ALIGN, DSA_MLA_PAGE_TOKENS } from './dsaMlaCacheLayout.ts';

const INT32_MAX = 2 ** 31 - 1;

/** A sparse MLA prefill problem: q [sQ][hQ][dQk] bf16, kv [sKv][dQk] bf16, indices [sQ][topk] int32 → out [sQ][hQ][dV]. */
export interface DsaSparseMlaPrefillConfig {
  /** Query tokens: 1 … 2^31 − 1. */
  readonly sQ: number;
  /** Query heads: 64 or 128. */
  readonly hQ: number;
  /** Latent KV tokens: 1 … 2^31 − 1 (need not be a multiple of 64). */
  readonly sKv: number;
  /** Index entries per query: 1 … 32768 (any value: the kernels pad internally). */
  readonly topk: number;
  /** Must be 576. */
  readonly dQk: number;
  /** Must be 512. */
  readonly dV: number;
  /** Positive and finite (DeepSeek-V3.2: 0.135234). */
  readonly smScale: number;
  /** Whether attn_sink [hQ] fp32 is given. */
  readonly hasSink: boolean;
  /** Whether topk_length [sQ] int32 is given. */
  readonly hasTopkLength: boolean;
}

/** A sparse MLA decode problem over the paged FP8 latent cache (656-B tokens, pages of 64 tokens). */
export interface DsaSparseMlaDecodeConfig {
  /** Sequences: 1 … 2^31 − 1. */
  readonly b: number;
  /** Queries per sequence: 1 or 2. */
  readonly sQ: number;
  /** Query heads: 64 or 128. */
  readonly hQ: number;
  /** Index entries per query: 1 … 32768. */
  readonly topk: number;
  /** Pages in the cache: ≥ 1, with numPages · 64 ≤ 2^31 (slots are int32). */
  readonly numPages: number;
  /** Bytes between pages: ≥ 64 · 656 and a multiple of 16. */
  readonly pageStrideBytes: number;
  /** Positive and finite (DeepSeek-V3.2: 0.135234). */
  readonly smScale: number;
  /** Whether attn_sink [hQ] fp32 is given. */
  readonly hasSink: boolean;
  /** Whether topk_length [b] int32 is given. */
  readonly hasTopkLength: boolean;
}

function integer(v: ArgumentProblems, name: string, x: unknown, min: number, max: number): number | undefined {
  if (typeof x === 'number' && Number.isSafeInteger(x) && x >= min && x <= max) return x;
  v.report(name, `must be an integer in [${min}, ${max}]`, x);
  return undefined;
}

function oneOf(v: ArgumentProblems, name: string, x: unknown, allowed: readonly number[], why: string): void {
  if (!allowed.includes(x as number)) v.report(name, `must be one of ${allowed.join(', ')} (${why})`, x);
}

function flag(v: ArgumentProblems, name: string, x: unknown): void {
  if (typeof x !== 'boolean') v.report(name, 'must be a boolean', x);
}

function scale(v: ArgumentProblems, x: unknown): void {
  if (typeof x !== 'number' || !(x > 0) || !Number.isFinite(x)) v.report('smScale', 'must be a positive finite number', x);
}

function asObject(config: unknown): Record<string, unknown> {
  if (typeof config !== 'object' || config === null) throw new DsaArgumentError('config', 'must be an object', config);
  return config as Record<string, unknown>;
}

/**
 * Checks a sparse MLA prefill config: sQ and sKv integers in [1, 2^31 − 1], hQ ∈ {64, 128}, topk in [1, 32768],
 * dQk = 576, dV = 512, smScale positive and finite, hasSink and hasTopkLength booleans.
 * @returns a frozen copy of the config.
 * @throws DsaArgumentError naming every broken field and its rule (the first one's name as `argument`).
 */
export function checkDsaSparseMlaPrefillConfig(config: DsaSparseMlaPrefillConfig): DsaSparseMlaPrefillConfig {
  const c = asObject(config);
  const v = new ArgumentProblems(DsaArgumentError);
  integer(v, 'sQ', c['sQ'], 1, INT32_MAX);
  integer(v, 'sKv', c['sKv'], 1, INT32_MAX);
  oneOf(v, 'hQ', c['hQ'], DSA_SPARSE_MLA_HEADS, 'query heads per latent KV head');
  integer(v, 'topk', c['topk'], 1, DSA_SPARSE_MLA_TOPK_MAX);
  oneOf(v, 'dQk', c['dQk'], [DSA_SPARSE_MLA_QK_DIM], '512 latent + 64 RoPE');
  oneOf(v, 'dV', c['dV'], [DSA_SPARSE_MLA_V_DIM], 'V is the first 512 dims of the latent row');
  scale(v, c['smScale']);
  flag(v, 'hasSink', c['hasSink']);
  flag(v, 'hasTopkLength', c['hasTopkLength']);
  v.throwIfAny();
  return Object.freeze({ ...config });
}

/**
 * Checks a sparse MLA decode config: b an integer in [1, 2^31 − 1], sQ ∈ {1, 2}, hQ ∈ {64, 128}, topk in [1, 32768],
 * numPages in [1, 2^25] (slots page · 64 + offset are int32), pageStrideBytes ≥ 64 · 656 = 41984 and a multiple of 16,
 * numPages · pageStrideBytes < 2^53, smScale positive and finite, hasSink and hasTopkLength booleans.
 * @returns a frozen copy of the config.
 * @throws DsaArgumentError naming every broken field and its rule (the first one's name as `argument`).
 */
export function checkDsaSparseMlaDecodeConfig(config: DsaSparseMlaDecodeConfig): DsaSparseMlaDecodeConfig {
  const c = asObject(config);
  const v = new ArgumentProblems(DsaArgumentError);
  integer(v, 'b', c['b'], 1, INT32_MAX);
  oneOf(v, 'sQ', c['sQ'], DSA_SPARSE_MLA_DECODE_SQ, 'queries per sequence in one decode step');
  oneOf(v, 'hQ', c['hQ'], DSA_SPARSE_MLA_HEADS, 'query heads per latent KV head');
  integer(v, 'topk', c['topk'], 1, DSA_SPARSE_MLA_TOPK_MAX);
  const pages = integer(v, 'numPages', c['numPages'], 1, 2 ** 31 / DSA_MLA_PAGE_TOKENS);
  const stride = integer(v, 'pageStrideBytes', c['pageStrideBytes'], DSA_MLA_PAGE_BYTES, Number.MAX_SAFE_INTEGER);
  if (stride !== undefined && stride % DSA_MLA_PAGE_STRIDE_ALIGN !== 0)
    v.report('pageStrideBytes', `must be a multiple of ${DSA_MLA_PAGE_STRIDE_ALIGN} (16-byte loads)`, stride);
  if (pages !== undefined && stride !== undefined && pages * stride > Number.MAX_SAFE_INTEGER)
    v.report('numPages', `× pageStrideBytes = ${stride} must address fewer than 2^53 bytes of cache`, pages);
  scale(v, c['smScale']);
  flag(v, 'hasSink', c['hasSink']);
  flag(v, 'hasTopkLength', c['hasTopkLength']);
  v.throwIfAny();
  return Object.freeze({ ...config });
}

/**
 * Checks an index array on the host: an Int32Array of rows · topk entries. Every value is legal (−1 or any value
 * outside the KV or the cache is an invalid entry that contributes nothing).
 * @throws DsaArgumentError naming `argument` when it is not an Int32Array or has the wrong length.
 */
export function checkDsaSparseMlaIndices(indices: unknown, rows: number, topk: number, argument = 'indices'): void {
  if (!(indices instanceof Int32Array)) throw new DsaArgumentError(argument, 'must be an Int32Array (int32 indices)', indices);
  if (indices.length !== rows * topk) throw new DsaArgumentError(argument, `must hold rows·topk = ${rows * topk} entries`, indices.length);
}

/**
 * Checks topk_length on the host: an Int32Array of `entries` values (sQ for the prefill, b for the decode), each in [0, topk].
 * @throws DsaArgumentError naming `topkLength` (wrong type or length) and every entry out of range (`topkLength[i]`).
 */
export function checkDsaSparseMlaTopkLength(topkLength: unknown, entries: number, topk: number): void {
  if (!(topkLength instanceof Int32Array)) throw new DsaArgumentError('topkLength', 'must be an Int32Array', topkLength);
  if (topkLength.length !== entries) throw new DsaArgumentError('topkLength', `must hold ${entries} entries`, topkLength.length);
  const v = new ArgumentProblems(DsaArgumentError);
  topkLength.forEach((n, i) => {
    if (n < 0 || n > topk) v.report(`topkLength[${i}]`, `must lie in [0, topk = ${topk}]`, n);
  });
  v.throwIfAny();
}

/**
 * Checks attn_sink on the host: a Float32Array of hQ values, each finite or −∞ (−∞ is no sink; NaN and +∞ are rejected).
 * @throws DsaArgumentError naming `attnSink` (wrong type or length) and every bad entry (`attnSink[h]`).
 */
export function checkDsaSparseMlaAttnSink(attnSink: unknown, hQ: number): void {
  if (!(attnSink instanceof Float32Array)) throw new DsaArgumentError('attnSink', 'must be a Float32Array', attnSink);
  if (attnSink.length !== hQ) throw new DsaArgumentError('attnSink', `must hold hQ = ${hQ} entries`, attnSink.length);
  const v = new ArgumentProblems(DsaArgumentError);
  attnSink.forEach((x, h) => {
    if (Number.isNaN(x) || x === Number.POSITIVE_INFINITY) v.report(`attnSink[${h}]`, 'must be finite or −∞', x);
  });
  v.throwIfAny();
}
