import fc from 'fast-check';
import { ArgumentError } from '@tilekit/numeric';
import { describe, expect, it } from 'vitest';
import { causalTopLeft, noMask } from '../mask/attentionMaskSpec.ts';
import { attentionProblemChecks } from './attentionProblemChecks.ts';
import { attentionLseStrides, checkedAttentionProblem } from './checkedAttentionProblem.ts';

const checks = attentionProblemChecks(ArgumentError, 'test');

const lengthsArb = fc.array(fc.integer({ min: 0, max: 40 }), { minLength: 1, maxLength: 5 });

describe('checkedAttentionProblem', () => {
  it('takes exactly the shared fields from the checked pieces and derives the LSE strides from mode, nheadQ and rowsQ', () => {
    fc.assert(
      fc.property(
        lengthsArb,
        lengthsArb,
        fc.boolean(),
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 1, max: 4 }),
        fc.boolean(),
        (lq, lk, group, nheadK, ratio, causal) => {
          const batch = group ? Math.min(lq.length, lk.length) : 1;
          const starts = (ls: readonly number[]) => ls.slice(0, batch).reduce<number[]>((s, n) => [...s, s.at(-1)! + n], [0]);
          const sequences = checks.sequences(
            group ? { seqstartQ: starts(lq), seqstartK: starts(lk) } : { seqlenQ: lq[0]!, seqlenK: lk[0]! },
            batch,
            false,
          );
          const heads = { batch, nheadQ: nheadK * ratio, nheadK };
          const softmax = { scale: 0.125, mask: causal ? causalTopLeft : noMask };
          const p = checkedAttentionProblem(heads, { hdimQ: 64, hdimV: 32 }, sequences, softmax);
          expect(Object.keys(p).sort()).toEqual([
            'batch',
            'hdimQ',
            'hdimV',
            'lseStrides',
            'mask',
            'mode',
            'nheadK',
            'nheadQ',
            'rowsK',
            'rowsQ',
            'scale',
            'seqlenK',
            'seqlenQ',
          ]);
          expect(p).toMatchObject({
            ...heads,
            hdimQ: 64,
            hdimV: 32,
            ...softmax,
            mode: sequences.mode,
            seqlenQ: sequences.seqlenQ,
            seqlenK: sequences.seqlenK,
            rowsQ: sequences.rowsQ,
            rowsK: sequences.rowsK,
          });
          expect(p.lseStrides).toEqual(attentionLseStrides(sequences.mode, heads.nheadQ, sequences.rowsQ));
        },
      ),
    );
  });
});
