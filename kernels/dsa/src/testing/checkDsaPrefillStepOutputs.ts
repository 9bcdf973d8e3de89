// The whole-path check of a DSA prefill step's GPU outputs against the CPU references: logits within the indexer
// reference's bound, the token indices equal to the exact top-k of the GPU's own logits, and the attention within the
// sparse MLA prefill reference's bound over those tokens.
import { compareDsaLogits } from '../reference/compareDsaLogits.ts';
import { compareDsaSparseMla } from '../reference/compareDsaSparseMla.ts';
import { dsaIndexerPrefillReferenceWithBound } from '../reference/dsaIndexerPrefillReference.ts';
import { dsaSparseMlaPrefillReferenceWithBound } from '../reference/dsaSparseMlaReference.ts';
import { dsaTopkReference } from '../reference/dsaTopkReference.ts';
import type { DsaRandomPrefillStep } from './dsaRandomPrefillStep.ts';
import { dsaStepVerdict, dsaWrongSelectionRows, type DsaStepVerdict } from './dsaStepVerdict.ts';

/** What the GPU left: logits [seqQ][seqKv], indices [seqQ][topk], out (bf16 bits or fp32 values), lse and max logits [seqQ][hQ]. */
export interface DsaPrefillStepOutputs {
  readonly logits: Float32Array;
  readonly indices: Int32Array;
  readonly out: Uint16Array | Float32Array;
  readonly lse: Float32Array;
  readonly maxLogits: Float32Array;
}

/** Checks `got` stage by stage, each against the reference fed by the GPU's previous stage. */
export function checkDsaPrefillStepOutputs(x: DsaRandomPrefillStep, got: DsaPrefillStepOutputs): DsaStepVerdict {
  const { S: rows, Skv } = x.index;
  const expected = dsaIndexerPrefillReferenceWithBound(x.index);
  const logits = compareDsaLogits(expected.logits, got.logits, expected.errorBound);
  const indices = dsaTopkReference({ logits: got.logits, rows, rowStride: Skv, k: x.topk });
  const wrongRows = dsaWrongSelectionRows(indices, got.indices, rows, x.topk);
  const attention = compareDsaSparseMla(
    dsaSparseMlaPrefillReferenceWithBound({
      q: x.q,
      kv: x.kv,
      indices,
      sQ: rows,
      sKv: Skv,
      hQ: x.hQ,
      topk: x.topk,
      smScale: x.smScale,
      ...(x.attnSink === undefined ? {} : { attnSink: x.attnSink }),
    }),
    got,
  );
  return dsaStepVerdict({ logits, attention, rows, wrongRows, selection: `top-${x.topk} → token indices`, through: '' });
}
