// The whole-path check of a DSA decode step's GPU outputs against the CPU references: logits within the indexer
// reference's bound, the slots equal to the exact top-k of the GPU's own logits mapped through the block table, and the
// attention within the sparse MLA reference's bound over those slots of the dequantized cache.
import { compareDsaLogits } from '../reference/compareDsaLogits.ts';
import { compareDsaSparseMla } from '../reference/compareDsaSparseMla.ts';
import { dsaIndexerDecodeReferenceWithBound } from '../reference/dsaIndexerDecodeReference.ts';
import { dsaMlaCacheRowReader } from '../reference/dsaMlaCacheRowReader.ts';
import { dsaSparseMlaDecodeReferenceWithBound } from '../reference/dsaSparseMlaReference.ts';
import { dsaTopkReference } from '../reference/dsaTopkReference.ts';
import { dsaTopkToPageTable } from '../reference/dsaTopkToPageTable.ts';
import type { DsaRandomDecodeStep } from './dsaRandomDecodeStep.ts';
import { dsaStepVerdict, dsaWrongSelectionRows, type DsaStepVerdict } from './dsaStepVerdict.ts';

/** What the GPU left: logits [rows][maxContext], slots [rows][topk], out (bf16 bits, or fp32 values), lse and max logits [B][hQ][nextN]. */
export interface DsaDecodeStepOutputs {
  readonly logits: Float32Array;
  readonly slots: Int32Array;
  readonly out: Uint16Array | Float32Array;
  readonly lse: Float32Array;
  readonly maxLogits: Float32Array;
}

/** Checks `got` stage by stage (each stage against the reference fed by the GPU's previous stage, so near-ties cannot flip a selection). */
export function checkDsaDecodeStepOutputs(x: DsaRandomDecodeStep, got: DsaDecodeStepOutputs): DsaStepVerdict {
  const input = x.index.input;
  const rows = input.B * input.nextN;
  const expected = dsaIndexerDecodeReferenceWithBound(input);
  const logits = compareDsaLogits(expected.logits, got.logits, expected.errorBound);
  const positions = dsaTopkReference({ logits: got.logits, rows, rowStride: input.maxContext, k: x.topk });
  const slots = dsaTopkToPageTable(positions, rows, x.topk, input.blockTable, input.maxPages, input.nextN);
  const wrongRows = dsaWrongSelectionRows(slots, got.slots, rows, x.topk);
  const attention = compareDsaSparseMla(
    dsaSparseMlaDecodeReferenceWithBound({
      q: x.q,
      indices: slots,
      b: input.B,
      sQ: input.nextN,
      hQ: x.hQ,
      topk: x.topk,
      smScale: x.smScale,
      readRow: dsaMlaCacheRowReader(x.mlaCache),
      ...(x.attnSink === undefined ? {} : { attnSink: x.attnSink }),
    }),
    got,
  );
  return dsaStepVerdict({
    logits,
    attention,
    rows,
    wrongRows,
    selection: `top-${x.topk} → slots`,
    through: ' through the block table',
  });
}
