import fc from 'fast-check';
import { ArgumentError } from '@tilekit/numeric';
import { describe, expect, it } from 'vitest';
import { causalBottomRight, causalTopLeft, noMask, slidingWindowMask } from '../mask/attentionMaskSpec.ts';
import { referenceAttentionFwd } from '../reference/referenceAttentionFwd.ts';
import { FmhaFwdArgumentError } from './fmhaFwdArgumentError.ts';
import { fmhaFwdOperandElements } from './fmhaFwdOperandElements.ts';
import { checkFmhaFwdProblem, type FmhaFwdProblem } from './fmhaFwdProblem.ts';
import { fmhaFwdProblemFlops } from './fmhaFwdProblemFlops.ts';
import { fmhaFwdReferenceArgs } from './fmhaFwdReferenceArgs.ts';
import { formatFmhaFwdProblem } from './formatFmhaFwdProblem.ts';

const base: FmhaFwdProblem = { dtype: 'fp16', batch: 2, nheadQ: 8, nheadK: 2, hdimQ: 128, seqlenQ: 100, seqlenK: 300 };

/** The thrown error's argument and message, for exact assertions. */
function errorOf(p: unknown): { argument: string; message: string } {
  try {
    checkFmhaFwdProblem(p as FmhaFwdProblem);
  } catch (e) {
    expect(e).toBeInstanceOf(FmhaFwdArgumentError);
    expect(e).toBeInstanceOf(ArgumentError);
    return { argument: (e as ArgumentError).argument, message: (e as Error).message };
  }
  throw new Error('no error thrown');
}

describe('checkFmhaFwdProblem', () => {
  it('fills defaults: nheadK, hdimV, seqlenK, layouts and packed strides, no mask, no LSE, scale 1/√d in fp32, one split', () => {
    const c = checkFmhaFwdProblem({ dtype: 'bf16', batch: 3, nheadQ: 4, hdimQ: 64, seqlenQ: 10 });
    expect(c).toMatchObject({
      mode: 'batch',
      nheadK: 4,
      hdimV: 64,
      seqlenK: 10,
      rowsQ: 10,
      rowsK: 10,
      inputLayout: 'bhsd',
      outputLayout: 'bhsd',
      mask: noMask,
      lse: false,
      numSplits: 1,
    });
    expect(c.scale).toBe(Math.fround(1 / 8));
    expect(c.qStrides).toEqual({ batch: 4 * 10 * 64, head: 10 * 64, row: 64 });
    expect(c.lseStrides).toEqual({ batch: 40, head: 10 });
    expect(checkFmhaFwdProblem({ ...base, hdimQ: 192 }).hdimV).toBe(128);
    expect(checkFmhaFwdProblem({ ...base, scale: 0.1 }).scale).toBe(Math.fround(0.1));
    expect(Object.isFrozen(c)).toBe(true);
  });

  it('bshd strides, CK mask strings, group mode with per-batch seqlenK', () => {
    const c = checkFmhaFwdProblem({ ...base, inputLayout: 'bshd', outputLayout: 'bshd', mask: 'b:3,0', lse: true, splitKv: 4 });
    expect(c.kStrides).toEqual({ batch: 300 * 2 * 128, head: 128, row: 2 * 128 });
    expect(c.oStrides).toEqual({ batch: 100 * 8 * 128, head: 128, row: 8 * 128 });
    expect(c.mask).toEqual(slidingWindowMask(3, 0, 'bottomRight'));
    const g = checkFmhaFwdProblem({
      dtype: 'fp16',
      batch: 3,
      nheadQ: 2,
      hdimQ: 32,
      seqstartQ: [0, 5, 5, 12],
      seqstartK: [0, 8, 8, 20],
      seqlenK: [6, 0, 12],
    });
    expect(g).toMatchObject({ mode: 'group', seqlenQ: 7, seqlenK: 12, rowsQ: 12, rowsK: 20, hasSeqlenK: true, seqlensK: [6, 0, 12] });
    expect(g.qStrides).toEqual({ batch: 0, head: 12 * 32, row: 32 });
    expect(g.lseStrides).toEqual({ batch: 0, head: 12 });
  });

  it('accepts explicit strides with gaps in either layout', () => {
    const c = checkFmhaFwdProblem({ ...base, qStrides: { batch: 8 * 128 * 136 + 5, head: 100 * 136, row: 136 } });
    expect(c.qStrides.row).toBe(136);
    const s = checkFmhaFwdProblem({ ...base, inputLayout: 'bshd', kStrides: { batch: 300 * 300, head: 136, row: 300 } });
    expect(s.kStrides).toEqual({ batch: 90000, head: 136, row: 300 });
  });

  it('rejects every rule with a typed error naming problem.<field>', () => {
    const cases: [unknown, string, RegExp][] = [
      [null, 'problem', /must be an object/],
      [{ ...base, dtype: 'fp32' }, 'problem.dtype', /fp16, bf16/],
      [{ ...base, batch: 0 }, 'problem.batch', /\[1, 65535\]/],
      [{ ...base, nheadQ: 2.5 }, 'problem.nheadQ', /integer/],
      [{ ...base, nheadK: 3 }, 'problem.nheadK', /must divide nheadQ = 8/],
      [{ ...base, hdimQ: 80 }, 'problem.hdimQ', /must be one of 32, 64, 96, 128, 192, 256/],
      [{ ...base, hdimQ: 192, hdimV: 192 }, 'problem.hdimV', /must be 128 with hdimQ = 192/],
      [{ ...base, hdimV: 64 }, 'problem.hdimV', /must be 128 with hdimQ = 128/],
      [{ ...base, seqlenQ: -1 }, 'problem.seqlenQ', /\[0, 1073741824\]/],
      [{ ...base, seqlenK: [1, 2] }, 'problem.seqlenK', /group mode/],
      [{ ...base, seqlenQ: undefined, seqstartQ: [0, 1, 2] }, 'problem.seqstartK', /required in group mode/],
      [{ ...base, seqlenQ: undefined, seqlenK: undefined, seqstartQ: [0, 1], seqstartK: [0, 1, 2] }, 'problem.seqstartQ', /batch \+ 1 = 3/],
      [
        { ...base, seqlenQ: undefined, seqlenK: undefined, seqstartQ: [1, 2, 3], seqstartK: [0, 1, 2] },
        'problem.seqstartQ[0]',
        /must be 0/,
      ],
      [
        { ...base, seqlenQ: undefined, seqlenK: undefined, seqstartQ: [0, 4, 3], seqstartK: [0, 1, 2] },
        'problem.seqstartQ',
        /non-decreasing, but \[2\] = 3 < \[1\] = 4/,
      ],
      [
        { ...base, seqlenQ: undefined, seqlenK: [1, 5], seqstartQ: [0, 4, 5], seqstartK: [0, 1, 5] },
        'problem.seqlenK[1]',
        /at most seqstartK\[2\] − seqstartK\[1\] = 4/,
      ],
      [{ ...base, seqstartQ: [0, 4, 5], seqstartK: [0, 1, 5] }, 'problem.seqlenQ', /omitted in group mode/],
      [{ ...base, inputLayout: 'sbhd' }, 'problem.inputLayout', /bhsd, bshd/],
      [{ ...base, outputLayout: 1 }, 'problem.outputLayout', /bhsd, bshd/],
      [{ ...base, qStrides: { batch: 1e6, head: 100 * 128, row: 127 } }, 'problem.qStrides.row', /at least hdim = 128/],
      [{ ...base, qStrides: { batch: 1e6, head: 100 * 128 - 1, row: 128 } }, 'problem.qStrides.head', /rows·row = 100·128/],
      [{ ...base, qStrides: { batch: 8 * 100 * 128 - 1, head: 100 * 128, row: 128 } }, 'problem.qStrides.batch', /nhead·head/],
      [{ ...base, inputLayout: 'bshd', vStrides: { batch: 1e6, head: 128, row: 255 } }, 'problem.vStrides.row', /nhead·head = 2·128/],
      [{ ...base, inputLayout: 'bshd', kStrides: { batch: 1e6, head: 120, row: 1000 } }, 'problem.kStrides.head', /hdim = 128/],
      [{ ...base, oStrides: { batch: -1, head: 1e4 * 128, row: 128 } }, 'problem.oStrides.batch', /integer/],
      [
        {
          ...base,
          seqlenQ: undefined,
          seqlenK: undefined,
          seqstartQ: [0, 1, 2],
          seqstartK: [0, 1, 2],
          qStrides: { batch: 5, head: 256, row: 128 },
        },
        'problem.qStrides.batch',
        /must be 0 in group mode/,
      ],
      [{ ...base, mask: 't:1' }, 'problem.mask', /must be a valid mask/],
      [{ ...base, mask: { kind: 'window', alignment: 'topLeft', left: 0.5, right: 0 } }, 'problem.mask', /mask\.left/],
      [{ ...base, lse: 1 }, 'problem.lse', /boolean/],
      [{ ...base, scale: 0 }, 'problem.scale', /finite number > 0/],
      [{ ...base, scale: Infinity }, 'problem.scale', /finite/],
      [{ ...base, scale: 1e-50 }, 'problem.scale', /representable in fp32/],
      [{ ...base, splitKv: 0 }, 'problem.splitKv', /\[1, 128\]/],
      [{ ...base, splitKv: 129 }, 'problem.splitKv', /\[1, 128\]/],
    ];
    for (const [p, argument, message] of cases) {
      const e = errorOf(p);
      expect(e.argument, JSON.stringify(p)).toBe(argument);
      expect(e.message, JSON.stringify(p)).toMatch(message);
    }
  });

  it('reports every independent violation in one error: k violations give k problems (fast-check)', () => {
    const shape = [
      'problem.batch',
      'problem.nheadQ',
      'problem.nheadK',
      'problem.hdimQ',
      'problem.seqlenQ',
      'problem.seqlenK',
      'problem.inputLayout',
      'problem.outputLayout',
    ];
    // [argument, change, the arguments whose violation skips this check (it compares against them)]
    const violations: readonly (readonly [string, Partial<Record<keyof FmhaFwdProblem, unknown>>, readonly string[]])[] = [
      ['problem.dtype', { dtype: 'fp32' }, []],
      ['problem.batch', { batch: 0 }, []],
      ['problem.nheadQ', { nheadQ: 0 }, []],
      ['problem.nheadK', { nheadK: 0 }, []],
      ['problem.hdimQ', { hdimQ: 80 }, []],
      ['problem.seqlenQ', { seqlenQ: -1 }, []],
      ['problem.seqlenK', { seqlenK: 2 ** 31 }, []],
      ['problem.inputLayout', { inputLayout: 'sbhd' }, []],
      ['problem.outputLayout', { outputLayout: 1 }, []],
      ['problem.qStrides.row', { qStrides: { batch: 1e6, head: 100 * 128, row: 127 } }, shape],
      ['problem.oStrides.batch', { oStrides: { batch: -1, head: 1e4 * 128, row: 128 } }, shape],
      ['problem.mask', { mask: 'q' }, []],
      ['problem.lse', { lse: 1 }, []],
      ['problem.scale', { scale: -1 }, []],
      ['problem.splitKv', { splitKv: 0 }, []],
    ];
    fc.assert(
      fc.property(fc.subarray([...violations]), (chosen) => {
        const broken = new Set(chosen.map(([argument]) => argument));
        const expected = chosen.filter(([, , needs]) => needs.every((n) => !broken.has(n))).map(([argument]) => argument);
        const p = Object.assign({}, base, ...chosen.map(([, change]) => change)) as FmhaFwdProblem;
        let problems: readonly { argument: string }[] = [];
        try {
          checkFmhaFwdProblem(p);
        } catch (e) {
          expect(e).toBeInstanceOf(FmhaFwdArgumentError);
          problems = (e as ArgumentError).problems;
          expect((e as ArgumentError).argument).toBe(problems[0]!.argument);
          if (problems.length > 1) expect((e as Error).message.startsWith(`${problems.length} problems: `)).toBe(true);
        }
        expect(problems.map((x) => x.argument)).toEqual(expected);
      }),
    );
  });

  it('packed default strides: operand spans equal the element counts; explicit strides never overlap (fast-check)', () => {
    fc.assert(
      fc.property(
        fc.record({
          batch: fc.integer({ min: 1, max: 3 }),
          nheadK: fc.integer({ min: 1, max: 3 }),
          ratio: fc.integer({ min: 1, max: 3 }),
          seqlenQ: fc.integer({ min: 1, max: 9 }),
          seqlenK: fc.integer({ min: 1, max: 9 }),
          hd: fc.constantFrom(...[32, 64, 96, 128, 192, 256]),
          layout: fc.constantFrom('bhsd' as const, 'bshd' as const),
        }),
        ({ batch, nheadK, ratio, seqlenQ, seqlenK, hd, layout }) => {
          const c = checkFmhaFwdProblem({
            dtype: 'fp16',
            batch,
            nheadQ: nheadK * ratio,
            nheadK,
            hdimQ: hd,
            seqlenQ,
            seqlenK,
            inputLayout: layout,
            outputLayout: layout,
          });
          const e = fmhaFwdOperandElements(c);
          expect(e.q).toBe(batch * nheadK * ratio * seqlenQ * hd);
          expect(e.k).toBe(batch * nheadK * seqlenK * hd);
          expect(e.v).toBe(batch * nheadK * seqlenK * c.hdimV);
          expect(e.o).toBe(batch * nheadK * ratio * seqlenQ * c.hdimV);
          // Distinct (b, h, r, d) map to distinct offsets.
          const seen = new Set<number>();
          for (let b = 0; b < batch; b++)
            for (let h = 0; h < nheadK; h++)
              for (let r = 0; r < seqlenK; r++)
                for (const d of [0, hd - 1]) seen.add(b * c.kStrides.batch + h * c.kStrides.head + r * c.kStrides.row + d);
          expect(seen.size).toBe(batch * nheadK * seqlenK * 2);
        },
      ),
    );
  });

  it('flops follow docs/benchmarks.md (causal halves only when sq = sk; group mode sums batches)', () => {
    const c = checkFmhaFwdProblem({ dtype: 'fp16', batch: 2, nheadQ: 16, hdimQ: 128, seqlenQ: 8192 });
    expect(fmhaFwdProblemFlops(c)).toBe(4 * 2 * 16 * 8192 * 8192 * 128);
    expect(
      fmhaFwdProblemFlops(checkFmhaFwdProblem({ dtype: 'fp16', batch: 2, nheadQ: 16, hdimQ: 128, seqlenQ: 8192, mask: causalTopLeft })),
    ).toBe(2 * 2 * 16 * 8192 * 8192 * 128);
    expect(
      fmhaFwdProblemFlops(
        checkFmhaFwdProblem({ dtype: 'fp16', batch: 1, nheadQ: 1, hdimQ: 192, seqlenQ: 16, seqlenK: 32, mask: causalBottomRight }),
      ),
    ).toBe(2 * 16 * 32 * 320);
    const g = checkFmhaFwdProblem({ dtype: 'fp16', batch: 2, nheadQ: 2, hdimQ: 64, seqstartQ: [0, 3, 7], seqstartK: [0, 5, 9] });
    expect(fmhaFwdProblemFlops(g)).toBe(2 * 2 * (3 * 5 + 4 * 4) * 128);
  });

  it('fmhaFwdReferenceArgs feeds the CPU reference with the same shapes, strides, scale and mask', () => {
    const c = checkFmhaFwdProblem({
      dtype: 'bf16',
      batch: 2,
      nheadQ: 2,
      nheadK: 1,
      hdimQ: 32,
      seqstartQ: [0, 3, 7],
      seqstartK: [0, 5, 9],
      seqlenK: [4, 4],
      mask: 't:1,1',
      inputLayout: 'bshd',
      lse: true,
    });
    const e = fmhaFwdOperandElements(c);
    const fill = (n: number) => new Uint16Array(n).fill(0x3f80); // bf16 1.0
    const r = referenceAttentionFwd(fmhaFwdReferenceArgs(c, { q: fill(e.q), k: fill(e.k), v: fill(e.v) }));
    expect(r.o.length).toBe(e.o);
    expect(r.lse.length).toBe(e.lse);
    expect([...r.o].every((x) => x === 1)).toBe(true);
    expect(r.args.scale).toBe(c.scale);
    expect(formatFmhaFwdProblem(c)).toBe('bf16 group 2x2/1h sq[3,4] sk[4,4] d32/32 bshd>bhsd mask=t:1,1 lse');
  });
});
