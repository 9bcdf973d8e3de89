// The randomized Sparge spec's checks, exercised without a GPU: a "run" emulated by the dense
// attention reference (topk 1 visits every allowed block, so sparse attention is dense attention with
// the problem's mask) must pass them on every drawn shape, layout and mode; a wrong element or map
// row must not.
import { referenceAttentionFwd, fmhaFwdReferenceArgs } from '@tilekit/fmha';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeSpargeLut } from '../spargeLut.ts';
import { planSparge, type SpargeProblem } from '../spargeRunner.ts';
import { spargeCausalBlockAllowed } from '../spargeShape.ts';
import { checkSpargeRandomOutputs, spargeRandomInputs, type SpargeRandomInputs, type SpargeRandomOutputs } from './spargeRandomGpuCase.ts';
import { spargeRandomProblemArb } from './randomSpargeConfig.ts';

/** Drawn problems made dense: topk 1, no PV vote, no int8. */
const denseProblemArb = spargeRandomProblemArb.map((p): SpargeProblem => {
  const { topk: _t, cdfthreshd: _c, pvThreshold: _v, ...params } = p.params;
  return { ...p, params: { ...params, topk: 1, int8: false }, pvMode: 'none' };
});

/** The outputs a correct run of a dense problem gives: every allowed block in the map, O and LSE of the dense reference. */
function emulatedRun(problem: SpargeProblem, inputs: SpargeRandomInputs): SpargeRandomOutputs {
  const { attention: p, params } = planSparge(problem);
  const map = new Uint8Array(p.batch * p.nheadQ * p.qBlocks * p.kBlocks);
  for (let b = 0; b < p.batch; b++) {
    const sq = p.mode === 'batch' ? p.seqlenQ : p.seqstartQ[b + 1]! - p.seqstartQ[b]!;
    const sk = p.mode === 'batch' ? p.seqlenK : p.seqstartK[b + 1]! - p.seqstartK[b]!;
    for (let h = 0; h < p.nheadQ; h++) {
      for (let i = 0; i < Math.ceil(sq / params.blockQ); i++) {
        for (let j = 0; j < Math.ceil(sk / params.blockK); j++) {
          map[((b * p.nheadQ + h) * p.qBlocks + i) * p.kBlocks + j] =
            !params.isCausal || spargeCausalBlockAllowed(i, j, params.blockQ, params.blockK, sq) ? 1 : 0;
        }
      }
    }
  }
  const lut = encodeSpargeLut({ batch: p.batch, nhead: p.nheadQ, qBlocks: p.qBlocks, kBlocks: p.kBlocks, map });
  const ref = referenceAttentionFwd(fmhaFwdReferenceArgs(p, inputs.bits));
  return { map, lut: lut.lut, validBlockNum: lut.validBlockNum, o: ref.o, ...(p.lse ? { lse: Float32Array.from(ref.lse) } : {}) };
}

describe('checkSpargeRandomOutputs', () => {
  it('passes a run emulated by the dense reference (every shape, layout, mode, GQA and causal choice drawn)', () => {
    fc.assert(
      fc.property(denseProblemArb, (problem) => {
        const inputs = spargeRandomInputs(planSparge(problem).attention);
        const found = checkSpargeRandomOutputs(problem, inputs, emulatedRun(problem, inputs));
        expect(found.map.wrong, found.map.first).toBe(0);
        expect(found.bad, found.first).toBe(0);
      }),
      { numRuns: 40 },
    );
  });

  it('finds a wrong O element, a wrong LSE row and a dropped block', () => {
    const problem: SpargeProblem = {
      dtype: 'bf16',
      batch: 2,
      nheadQ: 4,
      nheadK: 2,
      hdimQ: 64,
      seqstartQ: [0, 129, 146],
      seqstartK: [0, 259, 276],
      inputLayout: 'bshd',
      outputLayout: 'bhsd',
      lse: true,
      params: { topk: 1 },
      pipeline: 'vsa',
    };
    const inputs = spargeRandomInputs(planSparge(problem).attention);
    const run = emulatedRun(problem, inputs);
    const o = Float64Array.from(run.o);
    o[o.length - 1]! += 0.5;
    expect(checkSpargeRandomOutputs(problem, inputs, { ...run, o }).bad).toBe(1);
    const lse = Float32Array.from(run.lse!);
    lse[lse.length - 1]! += 0.5;
    expect(checkSpargeRandomOutputs(problem, inputs, { ...run, lse }).bad).toBe(1);
    const map = Uint8Array.from(run.map);
    map[1] = 0;
    expect(checkSpargeRandomOutputs(problem, inputs, { ...run, map }).map.wrong).toBeGreaterThan(0);
  });
});
