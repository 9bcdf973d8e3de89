import fc from 'fast-check';
import { ArgumentError } from '@tilekit/numeric';
import { describe, expect, it } from 'vitest';
import { causalBottomRight, noMask } from '../mask/attentionMaskSpec.ts';
import { ATTENTION_LAYOUTS, packedAttentionStrides } from '../reference/attentionTensorLayout.ts';
import { ATTENTION_MAX_SEQLEN, attentionProblemChecks, longestSlot } from './attentionProblemChecks.ts';
import { attentionLseStrides } from './checkedAttentionProblem.ts';

class TestProblemError extends ArgumentError {}
const checks = attentionProblemChecks(TestProblemError, 'test');

/** The thrown error's argument and message. */
function errorOf(f: () => unknown): { argument: string; message: string } {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(TestProblemError);
    return { argument: (e as ArgumentError).argument, message: (e as Error).message };
  }
  throw new Error('expected a TestProblemError');
}

const startsArb = fc
  .array(fc.integer({ min: 0, max: 50 }), { minLength: 0, maxLength: 6 })
  .map((lens) => lens.reduce<number[]>((s, n) => [...s, s.at(-1)! + n], [0]));

describe('attention problem checks', () => {
  it('integer: accepts exactly the safe integers in [min, max], naming the field and the range otherwise', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.integer({ min: -20, max: 20 }), fc.double({ noNaN: false })),
        fc.integer({ min: -10, max: 0 }),
        fc.integer({ min: 0, max: 10 }),
        (v, min, max) => {
          const ok = Number.isSafeInteger(v) && v >= min && v <= max;
          if (ok) expect(checks.integer('n', v, min, max)).toBe(v);
          else
            expect(errorOf(() => checks.integer('n', v, min, max))).toEqual({
              argument: 'test.n',
              message: expect.stringContaining(`must be an integer in [${min}, ${max}]`) as unknown as string,
            });
        },
      ),
    );
  });

  it('seqstarts: accepts cumulative starts from 0 and rejects a decrease at the index where it happens', () => {
    fc.assert(
      fc.property(startsArb, fc.nat(), (starts, pick) => {
        const batch = starts.length - 1;
        expect(checks.seqstarts('s', starts, batch)).toEqual(starts);
        expect(errorOf(() => checks.seqstarts('s', starts, batch + 1)).message).toMatch(`batch + 1 = ${batch + 2}`);
        if (batch > 0) {
          const i = 1 + (pick % batch);
          const broken = starts.map((s, j) => (j === i - 1 ? starts[i]! + 1 : s));
          const e = errorOf(() => checks.seqstarts('s', broken, batch));
          if (i === 1)
            expect(e).toMatchObject({ argument: 'test.s[0]', message: expect.stringContaining('must be 0') as unknown as string });
          else
            expect(e).toMatchObject({
              argument: 'test.s',
              message: expect.stringContaining(`non-decreasing, but [${i}] = ${starts[i]}`) as unknown as string,
            });
        }
      }),
    );
  });

  it('sequences: batch mode rows are the seqlens; group mode rows are the totals and seqlens the longest slots', () => {
    fc.assert(
      fc.property(startsArb, startsArb, fc.boolean(), (q, k, perBatch) => {
        const batch = Math.min(q.length, k.length) - 1;
        const seqstartQ = q.slice(0, batch + 1);
        const seqstartK = k.slice(0, batch + 1);
        const g = checks.sequences({ seqstartQ, seqstartK }, batch, perBatch);
        expect(g).toMatchObject({
          mode: 'group',
          rowsQ: seqstartQ[batch],
          rowsK: seqstartK[batch],
          seqlenQ: longestSlot(seqstartQ),
          seqlenK: longestSlot(seqstartK),
          hasSeqlenK: false,
        });
        expect(g.seqlensK.reduce((a, b) => a + b, 0)).toBe(seqstartK[batch]);
        const b = checks.sequences({ seqlenQ: seqstartQ[batch]!, seqlenK: seqstartK[batch]! }, Math.max(batch, 1), perBatch);
        expect(b).toMatchObject({ mode: 'batch', rowsQ: seqstartQ[batch], rowsK: seqstartK[batch], seqstartQ: [], seqstartK: [] });
      }),
    );
    expect(checks.sequences({ seqlenQ: 7 }, 2, false)).toMatchObject({ seqlenQ: 7, seqlenK: 7 });
    const used = checks.sequences({ seqstartQ: [0, 3, 4], seqstartK: [0, 5, 9], seqlenK: [2, 4] }, 2, true);
    expect(used).toMatchObject({ seqlensK: [2, 4], seqlenK: 4, hasSeqlenK: true, rowsK: 9 });
    expect(errorOf(() => checks.sequences({ seqstartQ: [0, 3, 4], seqstartK: [0, 5, 9], seqlenK: [6, 4] }, 2, true)).argument).toBe(
      'test.seqlenK[0]',
    );
    expect(errorOf(() => checks.sequences({ seqstartQ: [0, 3, 4], seqstartK: [0, 5, 9], seqlenK: 3 }, 2, false)).message).toMatch(
      /must be omitted in group mode/,
    );
    expect(errorOf(() => checks.sequences({ seqlenQ: 3, seqlenK: [3] }, 1, true)).message).toMatch(/must be a number in batch mode/);
    expect(errorOf(() => checks.sequences({ seqlenQ: 3, seqstartK: [0, 3] }, 1, true)).argument).toBe('test.seqlenQ');
    expect(errorOf(() => checks.sequences({ seqstartQ: [0, 3] }, 1, true)).argument).toBe('test.seqstartK');
    expect(errorOf(() => checks.sequences({ seqlenQ: ATTENTION_MAX_SEQLEN + 1 }, 1, true)).argument).toBe('test.seqlenQ');
  });

  it('strides: undefined gives the packed strides; accepted strides never map two elements to one offset', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...ATTENTION_LAYOUTS),
        fc.record({ nhead: fc.integer({ min: 1, max: 3 }), rows: fc.integer({ min: 1, max: 4 }), hdim: fc.integer({ min: 1, max: 4 }) }),
        fc.record({ batch: fc.nat(120), head: fc.nat(40), row: fc.nat(20) }),
        (layout, { nhead, rows, hdim }, given) => {
          expect(checks.strides('st', undefined, layout, nhead, rows, hdim, false)).toEqual(
            packedAttentionStrides(layout, nhead, rows, hdim),
          );
          expect(checks.strides('st', undefined, layout, nhead, rows, hdim, true).batch).toBe(0);
          let accepted;
          try {
            accepted = checks.strides('st', given, layout, nhead, rows, hdim, false);
          } catch (e) {
            expect(e).toBeInstanceOf(TestProblemError);
            expect((e as ArgumentError).argument).toMatch(/^test\.st\.(batch|head|row)$/);
            return;
          }
          const offsets = new Set<number>();
          for (let b = 0; b < 2; b++)
            for (let h = 0; h < nhead; h++)
              for (let r = 0; r < rows; r++)
                for (let d = 0; d < hdim; d++) offsets.add(b * accepted.batch + h * accepted.head + r * accepted.row + d);
          expect(offsets.size).toBe(2 * nhead * rows * hdim);
        },
      ),
    );
    expect(errorOf(() => checks.strides('st', { batch: 0, head: 100 * 128 - 1, row: 128 }, 'bhsd', 8, 100, 128, false))).toMatchObject({
      argument: 'test.st.head',
      message: expect.stringContaining('rows·row = 100·128') as unknown as string,
    });
    expect(errorOf(() => checks.strides('st', { batch: 5, head: 512, row: 128 }, 'bhsd', 2, 4, 128, true)).message).toMatch(
      /must be 0 in group mode/,
    );
  });

  it('layout, mask, flag, oneOf and heads name the field and the rule', () => {
    expect(checks.layout('l', undefined)).toBe('bhsd');
    expect(errorOf(() => checks.layout('l', 'sbhd'))).toMatchObject({
      argument: 'test.l',
      message: expect.stringContaining('bhsd, bshd') as unknown as string,
    });
    expect(checks.mask(undefined)).toBe(noMask);
    expect(checks.mask('b')).toEqual(causalBottomRight);
    expect(errorOf(() => checks.mask('q')).argument).toBe('test.mask');
    expect(checks.flag('f', undefined, true)).toBe(true);
    expect(errorOf(() => checks.flag('f', 1, false)).message).toMatch(/must be a boolean/);
    expect(errorOf(() => checks.oneOf('dtype', 'fp32', ['fp16', 'bf16'])).message).toMatch(/must be one of fp16, bf16/);
    expect(checks.heads({ batch: 2, nheadQ: 8 }, true)).toEqual({ batch: 2, nheadQ: 8, nheadK: 8 });
    expect(errorOf(() => checks.heads({ batch: 2, nheadQ: 8 }, false)).argument).toBe('test.nheadK');
    expect(errorOf(() => checks.heads({ batch: 2, nheadQ: 8, nheadK: 3 }, true)).message).toMatch(/must divide nheadQ = 8/);
    expect(errorOf(() => checks.heads({ batch: 65536, nheadQ: 8 }, true)).argument).toBe('test.batch');
  });

  it('compound checks report every independent problem in one error (the first one as argument)', () => {
    const all = (f: () => unknown): string[] => {
      try {
        f();
      } catch (e) {
        expect(e).toBeInstanceOf(TestProblemError);
        return (e as ArgumentError).problems.map((p) => p.argument);
      }
      return [];
    };
    fc.assert(
      fc.property(fc.boolean(), fc.boolean(), fc.boolean(), (badBatch, badQ, badK) => {
        const p = { batch: badBatch ? 0 : 2, nheadQ: badQ ? 1.5 : 8, nheadK: badK ? 70000 : 2 };
        expect(all(() => checks.heads(p, false))).toEqual(
          [badBatch && 'test.batch', badQ && 'test.nheadQ', badK && 'test.nheadK'].filter(Boolean),
        );
      }),
    );
    expect(all(() => checks.heads({ batch: 2, nheadQ: 8, nheadK: 3 }, false))).toEqual(['test.nheadK']);
    expect(all(() => checks.seqstarts('s', [0, -1, 'x', 5], 3))).toEqual(['test.s[1]', 'test.s[2]']);
    expect(all(() => checks.seqstarts('s', [0, 4, 3, 5, 2], 4))).toEqual(['test.s', 'test.s']);
    expect(all(() => checks.strides('st', { batch: -1, head: 0.5, row: 8 }, 'bhsd', 2, 4, 16, false))).toEqual([
      'test.st.head',
      'test.st.row',
      'test.st.batch',
    ]);
    expect(all(() => checks.strides('st', { batch: 5, head: 4, row: 2 }, 'bshd', 2, 4, 16, true))).toEqual([
      'test.st.head',
      'test.st.row',
      'test.st.batch',
    ]);
    expect(all(() => checks.sequences({ seqlenQ: -1, seqlenK: -2 }, 1, false))).toEqual(['test.seqlenQ', 'test.seqlenK']);
    expect(all(() => checks.sequences({ seqlenQ: 3, seqlenK: 4, seqstartQ: [1, 2] }, 1, false))).toEqual([
      'test.seqlenQ',
      'test.seqlenK',
      'test.seqstartQ[0]',
      'test.seqstartK',
    ]);
    // An invalid batch (undefined) leaves the starts' count unchecked but every other rule in force.
    expect(checks.sequences({ seqstartQ: [0, 2, 5], seqstartK: [0, 1, 1] }, undefined, false)).toMatchObject({
      mode: 'group',
      rowsQ: 5,
      rowsK: 1,
      seqlenQ: 3,
    });
    expect(all(() => checks.sequences({ seqstartQ: [0, 2, 1], seqstartK: [3] }, undefined, false))).toEqual([
      'test.seqstartQ',
      'test.seqstartK[0]',
    ]);
  });

  it('scale: the result is an fp32 value > 0, default 1/√hdimQ', () => {
    fc.assert(
      fc.property(fc.double({ min: 1e-30, max: 1e30, noNaN: true }), fc.integer({ min: 1, max: 1024 }), (s, hdim) => {
        const got = checks.scale(s, hdim);
        expect(Math.fround(got)).toBe(got);
        expect(got).toBeGreaterThan(0);
        expect(checks.scale(undefined, hdim)).toBe(Math.fround(1 / Math.sqrt(hdim)));
      }),
    );
    expect(errorOf(() => checks.scale(1e-50, 64)).message).toMatch(/representable in fp32/);
    expect(errorOf(() => checks.scale(-1, 64)).message).toMatch(/finite number > 0/);
  });

  it('longestSlot is the largest difference of consecutive starts; LSE strides are row-contiguous per head', () => {
    fc.assert(
      fc.property(startsArb, fc.integer({ min: 1, max: 8 }), fc.nat(100), (starts, nheadQ, rowsQ) => {
        const slots = starts.slice(1).map((e, b) => e - starts[b]!);
        expect(longestSlot(starts)).toBe(Math.max(0, ...slots));
        expect(attentionLseStrides('batch', nheadQ, rowsQ)).toEqual({ batch: nheadQ * rowsQ, head: rowsQ });
        expect(attentionLseStrides('group', nheadQ, rowsQ)).toEqual({ batch: 0, head: rowsQ });
      }),
    );
  });
});
