import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { attentionProblemSequences, attentionSequencesOf } from './attentionProblemSequences.ts';
import { attentionRandomSequencesArb } from './randomAttentionSequences.ts';

describe('attentionProblemSequences', () => {
  it('gives seqstarts in group mode and one length pair in batch mode, read back by attentionSequencesOf', () => {
    fc.assert(
      fc.property(attentionRandomSequencesArb, (s) => {
        const fields = attentionProblemSequences(s);
        expect('seqstartQ' in fields).toBe(s.group);
        expect(attentionSequencesOf({ batch: s.batch, ...fields })).toEqual(s);
      }),
    );
  });

  it('reads a missing batch-mode seqlenK as seqlenQ, and the first per-batch seqlenK otherwise', () => {
    expect(attentionSequencesOf({ batch: 2, seqlenQ: 17 })).toEqual({ group: false, batch: 2, sq: [17], sk: [17] });
    expect(attentionSequencesOf({ batch: 1, seqlenQ: 3, seqlenK: [5] })).toEqual({ group: false, batch: 1, sq: [3], sk: [5] });
  });
});
