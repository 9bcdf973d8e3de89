// A random DSA prefill chunk at small shapes: the indexer problem (causal or random windows) and the MLA side (queries
// and the bf16 latent rows of the same tokens), so the whole prefill path can be checked against the CPU references.
import type { Prng } from '@tilekit/host';
import type { DsaIndexerPrefillInput } from '../reference/dsaIndexerPrefillReference.ts';
import { DSA_SPARSE_MLA_SM_SCALE } from '../dsaSparseMlaShape.ts';
import { dsaRandomPrefillInput } from './dsaRandomInputs.ts';
import { dsaRandomSparseMlaRows, dsaRandomSparseMlaSinks } from './dsaSparseMlaInputs.ts';

/** Sizes of {@link dsaRandomPrefillStepInput}. */
export interface DsaRandomPrefillStepOptions {
  readonly seqQ: number;
  readonly seqKv: number;
  readonly indexHeads: number;
  readonly hQ: number;
  readonly topk: number;
  readonly windows?: 'causal' | 'random';
  readonly sink?: boolean;
}

/** A random prefill step: the indexer problem and the attention's queries, latent rows and scalars. */
export interface DsaRandomPrefillStep {
  readonly index: DsaIndexerPrefillInput;
  /** [seqQ][hQ][576] and [seqKv][576] bf16-valued. */
  readonly q: Float32Array;
  readonly kv: Float32Array;
  readonly hQ: number;
  readonly topk: number;
  readonly smScale: number;
  readonly attnSink?: Float32Array;
}

/** dsaRandomPrefillInput's indexer problem, then random bf16 queries and latent rows for the attention (and sinks). */
export function dsaRandomPrefillStepInput(o: DsaRandomPrefillStepOptions, rng: Prng): DsaRandomPrefillStep {
  const index = dsaRandomPrefillInput({ S: o.seqQ, H: o.indexHeads, Skv: o.seqKv, windows: o.windows ?? 'causal' }, rng);
  const q = dsaRandomSparseMlaRows(o.seqQ * o.hQ, rng, -1.5, 0.5);
  const kv = dsaRandomSparseMlaRows(o.seqKv, rng);
  const sink = o.sink === true ? { attnSink: dsaRandomSparseMlaSinks(o.hQ, rng) } : {};
  return { index, q, kv, hQ: o.hQ, topk: o.topk, smScale: DSA_SPARSE_MLA_SM_SCALE, ...sink };
}
