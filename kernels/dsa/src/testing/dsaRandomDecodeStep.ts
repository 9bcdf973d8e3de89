// A random DSA decode step at small shapes: a paged indexer problem and, on the same block table, the MLA side (queries,
// every slot's latent row and the FP8 cache holding them), so the whole path can be checked against the CPU references.
import type { Prng } from '@tilekit/host';
import { DSA_MLA_PAGE_TOKENS } from '../dsaMlaCacheLayout.ts';
import { DSA_PAGE_BYTES } from '../dsaShape.ts';
import { DSA_SPARSE_MLA_SM_SCALE } from '../dsaSparseMlaShape.ts';
import { dsaRandomDecodeInput, type DsaRandomDecodeCase } from './dsaRandomInputs.ts';
import { dsaSparseMlaDecodeCache } from './dsaSparseMlaDecodeCache.ts';
import { dsaRandomSparseMlaRows, dsaRandomSparseMlaSinks } from './dsaSparseMlaInputs.ts';

/** Sizes of {@link dsaRandomDecodeStepInput}. */
export interface DsaRandomDecodeStepOptions {
  readonly B: number;
  readonly nextN: number;
  /** Index query heads (32 or 64). */
  readonly indexHeads: number;
  readonly maxContext: number;
  /** Smallest context drawn (default nextN). */
  readonly minContext?: number;
  readonly hQ: number;
  readonly topk: number;
  readonly sink?: boolean;
}

/** A random step: the indexer case, the MLA queries and cache over the same pages, and the attention's scalars. */
export interface DsaRandomDecodeStep {
  readonly index: DsaRandomDecodeCase;
  /** Pages of both caches. */
  readonly numPages: number;
  /** [B][nextN][hQ][576] bf16-valued queries. */
  readonly q: Float32Array;
  /** [numPages · 64][576] bf16-valued latent rows, slot s in row s, and the FP8 cache holding them. */
  readonly latent: Float32Array;
  readonly mlaCache: Uint8Array;
  readonly hQ: number;
  readonly topk: number;
  readonly smScale: number;
  readonly attnSink?: Float32Array;
}

/** The indexer problem of dsaRandomDecodeInput (contexts in [minContext, maxContext]) and the MLA side on its pages. */
export function dsaRandomDecodeStepInput(o: DsaRandomDecodeStepOptions, rng: Prng): DsaRandomDecodeStep {
  const index = dsaRandomDecodeInput(
    { B: o.B, nextN: o.nextN, H: o.indexHeads, maxContext: o.maxContext, minContext: o.minContext ?? o.nextN },
    rng,
  );
  const numPages = index.input.cache.length / DSA_PAGE_BYTES;
  const q = dsaRandomSparseMlaRows(o.B * o.nextN * o.hQ, rng, -1.5, 0.5);
  const latent = dsaRandomSparseMlaRows(numPages * DSA_MLA_PAGE_TOKENS, rng);
  const mlaCache = dsaSparseMlaDecodeCache({ latent, numPages });
  const sink = o.sink === true ? { attnSink: dsaRandomSparseMlaSinks(o.hQ, rng) } : {};
  return { index, numPages, q, latent, mlaCache, hQ: o.hQ, topk: o.topk, smScale: DSA_SPARSE_MLA_SM_SCALE, ...sink };
}
