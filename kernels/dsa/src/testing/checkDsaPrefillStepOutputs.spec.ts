import { Prng } from '@tilekit/host';
import { describe, expect, it } from 'vitest';
import { dsaIndexerPrefillReferenceWithBound } from '../reference/dsaIndexerPrefillReference.ts';
import { dsaSparseMlaPrefillReference } from '../reference/dsaSparseMlaReference.ts';
import { dsaTopkReference } from '../reference/dsaTopkReference.ts';
import { checkDsaPrefillStepOutputs, type DsaPrefillStepOutputs } from './checkDsaPrefillStepOutputs.ts';
import { dsaRandomPrefillStepInput } from './dsaRandomPrefillStep.ts';

/** The CPU references' own outputs of a prefill step. */
function referenceOutputs(x: ReturnType<typeof dsaRandomPrefillStepInput>): DsaPrefillStepOutputs {
  const { S, Skv } = x.index;
  const logits = dsaIndexerPrefillReferenceWithBound(x.index).logits;
  const indices = dsaTopkReference({ logits, rows: S, rowStride: Skv, k: x.topk });
  const r = dsaSparseMlaPrefillReference({ q: x.q, kv: x.kv, indices, sQ: S, sKv: Skv, hQ: x.hQ, topk: x.topk, smScale: x.smScale });
  return { logits, indices, out: r.out, lse: r.lse, maxLogits: r.maxLogits };
}

describe('checkDsaPrefillStepOutputs', () => {
  const x = dsaRandomPrefillStepInput({ seqQ: 6, seqKv: 90, indexHeads: 32, hQ: 64, topk: 40, windows: 'random' }, new Prng(11));
  const good = referenceOutputs(x);

  it('passes the references own outputs (short and empty windows leave −1 indices)', () => {
    const v = checkDsaPrefillStepOutputs(x, good);
    expect(v.lines).toHaveLength(3);
    expect(v.ok).toBe(true);
    expect(good.indices.includes(-1)).toBe(true);
  });

  it('fails a logit past its bound, a wrong index, and a wrong lse', () => {
    const logits = good.logits.slice();
    const at = logits.findIndex((v) => Number.isFinite(v));
    logits[at] = logits[at]! + 1;
    expect(checkDsaPrefillStepOutputs(x, { ...good, logits }).ok).toBe(false);
    const indices = good.indices.slice();
    indices[indices.findIndex((s) => s >= 0)] = -1;
    expect(checkDsaPrefillStepOutputs(x, { ...good, indices }).ok).toBe(false);
    const lse = good.lse.slice();
    lse[lse.findIndex((v) => Number.isFinite(v))]! += 0.5;
    expect(checkDsaPrefillStepOutputs(x, { ...good, lse }).ok).toBe(false);
  });
});
