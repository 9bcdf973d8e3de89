import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { spargeBlockMapReference } from '../spargeBlockMapReference.ts';
import { spargeRandomValues } from '../testing/spargeRandomValues.ts';
import { compareSpargeSelect } from './spargeSelectCompare.ts';
import { spargeSelectReference, type SpargeSelectProblem } from './spargeSelectReference.ts';
import { spargeSelectTestInputs } from './spargeSelectTestInputs.ts';

const blockSize = fc.constantFrom(16, 32);

describe('spargeSelectReference', () => {
  it('equals spargeBlockMapReference fed its own pooled intermediates (batch mode)', () => {
    fc.assert(
      fc.property(
        fc.record({
          batch: fc.integer({ min: 1, max: 2 }),
          nheadK: fc.integer({ min: 1, max: 2 }),
          ratio: fc.integer({ min: 1, max: 2 }),
          seqlenQ: fc.integer({ min: 1, max: 100 }),
          seqlenK: fc.integer({ min: 1, max: 100 }),
          blockQ: blockSize,
          blockK: blockSize,
          cdf: fc.boolean(),
          value: fc.double({ min: 0.05, max: 1, noNaN: true }),
          theta: fc.double({ min: -0.1, max: 0.9, noNaN: true }),
          isCausal: fc.boolean(),
          attentionSink: fc.boolean(),
          seed: fc.nat(1000),
        }),
        (c) => {
          const nhead = c.nheadK * c.ratio;
          const d = 64;
          const shape = { batch: c.batch, nhead, nheadK: c.nheadK, seqlenQ: c.seqlenQ, seqlenK: c.seqlenK, headDim: d };
          const q = spargeRandomValues(c.batch * nhead * c.seqlenQ * d, c.seed);
          const k = spargeRandomValues(c.batch * c.nheadK * c.seqlenK * d, c.seed + 7);
          const perHead = Array.from({ length: nhead }, (_, h) => Math.min(1, c.value * (1 + h / 4)));
          const common = { simthreshd1: c.theta, isCausal: c.isCausal, attentionSink: c.attentionSink, blockQ: c.blockQ, blockK: c.blockK };
          const ref = spargeBlockMapReference({
            shape,
            q,
            k,
            params: c.cdf ? { ...common, cdfthreshd: perHead } : { ...common, topk: perHead },
          });
          const p: SpargeSelectProblem = {
            ...shape,
            blockQ: c.blockQ,
            blockK: c.blockK,
            selection: ref.params.selection,
            selectionValue: ref.params.selectionValue,
            simthreshd1: ref.params.simthreshd1,
            isCausal: c.isCausal,
            attentionSink: c.attentionSink,
          };
          const sel = spargeSelectReference(p, {
            pooledQ: ref.pooledQ,
            simQ: ref.similarityQ,
            pooledK: ref.pooledK,
            simK: ref.similarityK,
          });
          expect(sel.map).toEqual(ref.blockMap.map);
          expect(sel.lut.lut).toEqual(ref.lut.lut);
          expect(sel.lut.validBlockNum).toEqual(ref.lut.validBlockNum);
          expect(sel.scoreMargin).toEqual(ref.scoreMargin);
          expect(sel.massMargin).toEqual(ref.massMargin);
          const visited = sel.visited.reduce((s, v) => s + v, 0);
          expect(visited).toBe(ref.lut.validBlockNum.reduce((s, v) => s + v, 0));
        },
      ),
      { numRuns: 40 },
    );
  });

  it('in group mode, gives each sequence the rows of a batch-mode run of it alone, zero past its blocks', () => {
    const lensQ = [40, 0, 100, 17];
    const lensK = [33, 20, 100, 0];
    const start = (l: number[]): number[] => l.reduce((s, x) => [...s, s[s.length - 1]! + x], [0]);
    const base = {
      batch: 4,
      nhead: 2,
      nheadK: 1,
      headDim: 64,
      blockQ: 16,
      blockK: 16,
      selection: 'cdf',
      selectionValue: [0.5, 0.8],
      simthreshd1: [0.2, -1],
      isCausal: true,
      attentionSink: true,
    } as const;
    const g: SpargeSelectProblem = { ...base, seqstartQ: start(lensQ), seqstartK: start(lensK) };
    const x = spargeSelectTestInputs(g, { seed: 3, duplicateKeyBlocks: true });
    const all = spargeSelectReference(g, x);
    const { qBlocksMax: QM, kBlocksMax: KM } = all.grid;
    expect([QM, KM]).toEqual([7, 7]);
    for (let b = 0; b < 4; b++) {
      const qb = Math.ceil(lensQ[b]! / 16);
      const kb = Math.ceil(lensK[b]! / 16);
      for (let h = 0; h < 2; h++) {
        for (let i = 0; i < QM; i++) {
          const row = Array.from(all.map.subarray(((b * 2 + h) * QM + i) * KM, ((b * 2 + h) * QM + i + 1) * KM));
          if (i >= qb || kb === 0) {
            expect(row.every((v) => v === 0)).toBe(true);
            continue;
          }
          const one: SpargeSelectProblem = { ...base, batch: 1, seqlenQ: lensQ[b]!, seqlenK: lensK[b]! };
          const slice = {
            pooledQ: x.pooledQ.subarray((b * 2 + h) * QM * 64, (b * 2 + h + 1) * QM * 64),
            simQ: x.simQ.subarray((b * 2 + h) * QM, (b * 2 + h + 1) * QM),
            pooledK: x.pooledK.subarray(b * KM * 64, (b + 1) * KM * 64),
            simK: x.simK.subarray(b * KM, (b + 1) * KM),
          };
          // The single-sequence run reads head h as head 0 of 1 with the same thresholds.
          const alone = spargeSelectReference(
            { ...one, nhead: 1, selectionValue: [base.selectionValue[h]!], simthreshd1: [base.simthreshd1[h]!] },
            {
              // The first qb (kb) rows of the padded grid are the sequence's own.
              pooledQ: slice.pooledQ.subarray(0, qb * 64),
              simQ: slice.simQ.subarray(0, qb),
              pooledK: slice.pooledK.subarray(0, kb * 64),
              simK: slice.simK.subarray(0, kb),
            },
          );
          expect(row.slice(0, kb)).toEqual(Array.from(alone.map.subarray(i * kb, (i + 1) * kb)));
          expect(row.slice(kb).every((v) => v === 0)).toBe(true);
        }
      }
    }
  });
});

describe('compareSpargeSelect', () => {
  const p: SpargeSelectProblem = {
    batch: 1,
    nhead: 2,
    nheadK: 2,
    headDim: 64,
    blockQ: 16,
    blockK: 16,
    seqlenQ: 64,
    seqlenK: 128,
    selection: 'topk',
    selectionValue: [0.25, 0.5],
    simthreshd1: [-1, -1],
    isCausal: false,
    attentionSink: false,
  };
  const ref = spargeSelectReference(p, spargeSelectTestInputs(p, { seed: 9 }));
  const gpuOf = () => ({
    map: ref.map.slice(),
    lut: ref.lut.lut.slice(),
    validBlockNum: ref.lut.validBlockNum.slice(),
    visited: ref.visited.slice(),
  });

  it('accepts the CPU result itself', () => {
    expect(compareSpargeSelect(ref, gpuOf())).toEqual({ rows: 8, excused: 0, wrong: 0, first: '' });
  });

  it('flags a row whose map moved with a clear margin, and a LUT that does not encode the map', () => {
    const moved = gpuOf();
    moved.map[0] = moved.map[0] ? 0 : 1;
    const verdict = compareSpargeSelect(ref, moved);
    expect(verdict.wrong).toBeGreaterThan(0);
    const badLut = gpuOf();
    badLut.lut[8]! += 1;
    expect(compareSpargeSelect(ref, badLut).wrong).toBeGreaterThan(0);
  });

  it('excuses a differing row whose margin is within the tolerance', () => {
    const moved = gpuOf();
    moved.map[0] = moved.map[0] ? 0 : 1;
    const verdict = compareSpargeSelect(ref, moved, { score: Infinity });
    expect(verdict.excused).toBe(1);
  });
});
