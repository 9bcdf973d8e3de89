import { Prng } from '@tilekit/host';
import { describe, expect, it } from 'vitest';
import { dsaIndexerDecodeReferenceWithBound } from '../reference/dsaIndexerDecodeReference.ts';
import { dsaMlaCacheRowReader } from '../reference/dsaMlaCacheRowReader.ts';
import { dsaSparseMlaDecodeReference } from '../reference/dsaSparseMlaReference.ts';
import { dsaTopkReference } from '../reference/dsaTopkReference.ts';
import { dsaTopkToPageTable } from '../reference/dsaTopkToPageTable.ts';
import { checkDsaDecodeStepOutputs, type DsaDecodeStepOutputs } from './checkDsaDecodeStepOutputs.ts';
import { dsaRandomDecodeStepInput } from './dsaRandomDecodeStep.ts';

/** The CPU references' own outputs of a step, in the GPU's formats. */
function referenceOutputs(x: ReturnType<typeof dsaRandomDecodeStepInput>): DsaDecodeStepOutputs {
  const input = x.index.input;
  const rows = input.B * input.nextN;
  const logits = dsaIndexerDecodeReferenceWithBound(input).logits;
  const positions = dsaTopkReference({ logits, rows, rowStride: input.maxContext, k: x.topk });
  const slots = dsaTopkToPageTable(positions, rows, x.topk, input.blockTable, input.maxPages, input.nextN);
  const r = dsaSparseMlaDecodeReference({
    q: x.q,
    indices: slots,
    b: input.B,
    sQ: input.nextN,
    hQ: x.hQ,
    topk: x.topk,
    smScale: x.smScale,
    readRow: dsaMlaCacheRowReader(x.mlaCache),
    ...(x.attnSink === undefined ? {} : { attnSink: x.attnSink }),
  });
  return { logits, slots, out: r.out, lse: r.lse, maxLogits: r.maxLogits };
}

describe('checkDsaDecodeStepOutputs', () => {
  const x = dsaRandomDecodeStepInput({ B: 2, nextN: 2, indexHeads: 32, maxContext: 150, hQ: 64, topk: 100, sink: true }, new Prng(7));
  const good = referenceOutputs(x);

  it('passes the references own outputs (contexts shorter than topk leave −1 slots)', () => {
    const v = checkDsaDecodeStepOutputs(x, good);
    expect(v.lines).toHaveLength(3);
    expect(v.ok).toBe(true);
    expect(good.slots.includes(-1)).toBe(true);
  });

  it('fails a logit past its bound, a wrong slot, and a wrong output value', () => {
    const at = good.logits.findIndex((v) => Number.isFinite(v));
    const logits = good.logits.slice();
    logits[at] = logits[at]! + 1;
    expect(checkDsaDecodeStepOutputs(x, { ...good, logits }).ok).toBe(false);
    const slots = good.slots.slice();
    slots[slots.findIndex((s) => s >= 0)] = -1;
    expect(checkDsaDecodeStepOutputs(x, { ...good, slots }).ok).toBe(false);
    const out = good.out.slice();
    out[5] = out[5]! + 1;
    expect(checkDsaDecodeStepOutputs(x, { ...good, out }).ok).toBe(false);
  });
});
