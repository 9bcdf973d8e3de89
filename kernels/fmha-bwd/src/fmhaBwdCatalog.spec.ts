import {
  causalBottomRight,
  causalTopLeft,
  checkFmhaBwdRecordTriple,
  FmhaBwdLauncher,
  fmhaBwdTripleMismatches,
  checkFmhaBwdTraits,
  makeFmhaBwdWorkspace,
  noMask,
  slidingWindowMask,
  type FmhaBwdExecutor,
  checkFmhaBwdProblem,
  FmhaBwdArgumentError,
  fmhaBwdProblemFlops,
  fmhaBwdTraitsOf,
} from '@tilekit/fmha';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  FMHA_BWD_ALL_INSTANCES,
  FMHA_BWD_DQ_DK_DV_CATALOG,
  FMHA_BWD_TRIPLES,
  fmhaBwdAccumulationOf,
  fmhaBwdKernelsOf,
} from './fmhaBwdCatalog.ts';
import { dqAccHeadBytes } from './fmhaBwdDqDkDvInstance.ts';
import { fmhaBwdRowTile } from '@tilekit/fmha-launch';
import { fmhaBwdLayoutProblems, packFmhaBwdConvertDq, packFmhaBwdDotDoO, packFmhaBwdDqDkDv } from './fmhaBwdRunner.ts';
import { fakeFmhaBwdArgs } from './testing/fakeFmhaBwdArgs.ts';

const silent: FmhaBwdExecutor<undefined> = { copyToDevice: () => {}, fillZero: () => {}, launch: () => {} };

const starts = (lens: readonly number[]): number[] => lens.reduce((s, l) => [...s, s[s.length - 1]! + l], [0]);

const problemArb = fc.record({
  dtype: fc.constantFrom('fp16' as const, 'bf16' as const),
  d: fc.constantFrom(64, 128),
  mask: fc.constantFrom(noMask, causalTopLeft, causalBottomRight, slidingWindowMask(17, 5)),
  deterministic: fc.boolean(),
  lens: fc.option(fc.array(fc.integer({ min: 0, max: 700 }), { minLength: 1, maxLength: 5 }), { nil: undefined }),
  s: fc.integer({ min: 0, max: 5000 }),
  h: fc.constantFrom(1, 2, 4),
  ratio: fc.constantFrom(1, 2),
});

describe('fmha-bwd catalog', () => {
  it('every triple is well formed and names compiled instances; kN0 and the accumulation come from the instance', () => {
    FMHA_BWD_TRIPLES.forEach((t, i) => {
      expect(() => checkFmhaBwdRecordTriple(t, `triples[${i}]`)).not.toThrow();
      const k = fmhaBwdKernelsOf(t);
      expect(t.dqDkDv.kN0).toBe(k.dqDkDv.kN0);
      expect(t.dqDkDv.dqAccumulation).toBe(fmhaBwdAccumulationOf(k.dqDkDv, t.dqDkDv.groupMode));
      expect(k.convertDq?.policy.deterministic).toBe(t.dqDkDv.dqAccumulation !== 'atomic');
    });
    expect(FMHA_BWD_TRIPLES.length).toBe(2 * FMHA_BWD_DQ_DK_DV_CATALOG.length);
    expect(new Set(FMHA_BWD_ALL_INSTANCES.map((i) => i.key.hash)).size).toBe(FMHA_BWD_ALL_INSTANCES.length);
  });

  it('exactly one triple matches every supported problem, with the mask kind and accumulation it needs', () => {
    fc.assert(
      fc.property(problemArb, (c) => {
        const group = c.lens !== undefined;
        const p = checkFmhaBwdProblem({
          dtype: c.dtype,
          batch: group ? c.lens!.length : 2,
          nheadQ: c.h * c.ratio,
          nheadK: c.h,
          hdimQ: c.d,
          mask: c.mask,
          deterministic: c.deterministic,
          ...(group ? { seqstartQ: starts(c.lens!), seqstartK: starts(c.lens!.map((l) => l + 3)) } : { seqlenQ: c.s }),
        });
        const traits = checkFmhaBwdTraits(fmhaBwdTraitsOf(p));
        const matches = FMHA_BWD_TRIPLES.filter((t) => fmhaBwdTripleMismatches(t, traits).length === 0);
        expect(matches.length).toBe(1);
        const t = matches[0]!;
        expect(t.dqDkDv.masks).toEqual([c.mask.kind]);
        expect(t.dqDkDv.dqAccumulation).toBe(!c.deterministic ? 'atomic' : group ? 'splitStore' : 'persistent');
        const launcher = new FmhaBwdLauncher(fmhaBwdTraitsOf(p), {
          catalog: FMHA_BWD_TRIPLES,
          executor: silent,
          smCount: 132,
          warn: () => {},
        });
        expect(launcher.supported).toBe(true);
      }),
    );
  });

  it('an unsupported problem (d 256 deterministic, a generic mask) gives an unsupported launcher naming the trait', () => {
    const warnings: string[] = [];
    for (const problem of [
      { hdimQ: 256, deterministic: true },
      { hdimQ: 64, mask: 'g:3,5' },
    ] as const) {
      const p = checkFmhaBwdProblem({ dtype: 'fp16', batch: 1, nheadQ: 2, seqlenQ: 100, ...problem });
      const l = new FmhaBwdLauncher(fmhaBwdTraitsOf(p), {
        catalog: FMHA_BWD_TRIPLES,
        executor: silent,
        smCount: 132,
        warn: (m) => warnings.push(m),
      });
      expect(l.supported).toBe(false);
    }
    expect(warnings[0]).toMatch(/determin|hdimQ/);
    expect(warnings[1]).toMatch(/mask/);
  });

  it('the dq_dk_dv kernel finds dq_acc where the workspace puts it (dqAccHeadBytes = dqAccOffset) in every mode', () => {
    fc.assert(
      fc.property(problemArb, fc.integer({ min: 1, max: 264 }), (c, sms) => {
        const group = c.lens !== undefined;
        const p = checkFmhaBwdProblem({
          dtype: c.dtype,
          batch: group ? c.lens!.length : 3,
          nheadQ: c.h,
          hdimQ: c.d,
          mask: c.mask,
          deterministic: c.deterministic,
          ...(group ? { seqstartQ: starts(c.lens!), seqstartK: starts(c.lens!) } : { seqlenQ: c.s }),
        });
        const traits = checkFmhaBwdTraits(fmhaBwdTraitsOf(p));
        const t = FMHA_BWD_TRIPLES.find((x) => fmhaBwdTripleMismatches(x, traits).length === 0)!;
        const ws = makeFmhaBwdWorkspace(traits, t.dqDkDv, sms);
        expect(dqAccHeadBytes(traits.batch, traits.groupMode, traits.deterministic)).toBe(ws.dqAccOffset);
      }),
    );
  });

  it('packs the three stages for a problem (fake TMA encoder): grids cover the rows, split grids the largest split count', () => {
    const p = checkFmhaBwdProblem({
      dtype: 'bf16',
      batch: 3,
      nheadQ: 4,
      nheadK: 2,
      hdimQ: 128,
      seqstartQ: starts([1, 0, 259]),
      seqstartK: starts([17, 5, 300]),
      mask: causalBottomRight,
      deterministic: true,
    });
    const l = new FmhaBwdLauncher(fmhaBwdTraitsOf(p), { catalog: FMHA_BWD_TRIPLES, executor: silent, smCount: 132 });
    const k = fmhaBwdKernelsOf(l.triple!);
    const args = fakeFmhaBwdArgs(p, { batch: 0, head: 1024, row: 128 }, { seqstartQ: 0x400n, seqstartK: 0x500n });
    const dot = packFmhaBwdDotDoO(k.dotDoO, l.traits, args);
    expect(dot.grid).toEqual([Math.ceil(259 / k.dotDoO.tileM), 4, 3]);
    const dq = packFmhaBwdDqDkDv(k.dqDkDv, l.traits, l.workspace!, args, () => new Uint8Array(128));
    expect(dq.grid).toEqual([Math.ceil(300 / 128), 2, 3]);
    expect(l.workspace!.nsplits).toEqual([1, 1, 3]);
    const conv = packFmhaBwdConvertDq(k.convertDq!, l.traits, args);
    expect(conv.grid).toEqual([Math.ceil(259 / k.convertDq!.tileM), 4, 3]);
  });
});

describe('fmha-bwd row tile encoding', () => {
  it('covers rows × cols exactly: threads · elements per thread = rows · cols, lanes per row · vector ≤ cols', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(4, 8),
        fc.integer({ min: 1, max: 64 }),
        fc.constantFrom(32, 64, 128, 256),
        fc.integer({ min: 1, max: 64 }),
        (vec, n, threads, ept) => {
          const cols = vec * n;
          const tile = fmhaBwdRowTile({ cols, vectorLength: vec, threads, elementsPerThread: ept });
          expect(tile.encoding.threadBufferSize * threads).toBe(tile.rows * cols);
          expect(cols % (tile.lanesPerRow * vec)).toBe(0);
          expect(32 % tile.lanesPerRow).toBe(0);
        },
      ),
    );
  });
});

describe('fmha-bwd problem', () => {
  it('rejects bad fields with a typed error naming them', () => {
    const bad = (p: object, field: string): void => {
      expect(() => checkFmhaBwdProblem({ dtype: 'fp16', batch: 1, nheadQ: 2, hdimQ: 64, seqlenQ: 16, ...p } as never)).toThrow(
        expect.objectContaining({ argument: `problem.${field}` }),
      );
      expect(() => checkFmhaBwdProblem({ dtype: 'fp16', batch: 1, nheadQ: 2, hdimQ: 64, seqlenQ: 16, ...p } as never)).toThrow(
        FmhaBwdArgumentError,
      );
    };
    bad({ dtype: 'fp32' }, 'dtype');
    bad({ nheadK: 3 }, 'nheadK');
    bad({ mask: 'q' }, 'mask');
    bad({ deterministic: 1 }, 'deterministic');
    bad({ scale: -1 }, 'scale');
    bad({ strides: { x: { batch: 0, head: 0, row: 0 } } }, 'strides.x');
    bad({ strides: { q: { batch: 4096, head: 1024, row: 32 } } }, 'strides.q.row');
    bad({ seqstartQ: [0, 4] }, 'seqlenQ');
  });

  it('credits 2.5 × the forward FLOPs (halved for causal with sq = sk)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4096 }), fc.boolean(), (s, causal) => {
        const p = checkFmhaBwdProblem({ dtype: 'fp16', batch: 2, nheadQ: 3, hdimQ: 128, seqlenQ: s, mask: causal ? 't' : '0' });
        expect(fmhaBwdProblemFlops(p)).toBe((2.5 * 2 * 2 * 3 * s * s * 256) / (causal ? 2 : 1));
      }),
    );
  });

  it('flags layouts the kernels cannot take', () => {
    const p = checkFmhaBwdProblem({
      dtype: 'fp16',
      batch: 1,
      nheadQ: 1,
      hdimQ: 64,
      seqlenQ: 8,
      strides: { o: { batch: 4000, head: 700, row: 68 }, q: { batch: 4000, head: 700, row: 68 } },
    });
    const problems = fmhaBwdLayoutProblems(p);
    expect(problems.some((x) => x.startsWith('o row'))).toBe(true);
    expect(problems.some((x) => x.startsWith('q row'))).toBe(true);
    expect(fmhaBwdLayoutProblems(checkFmhaBwdProblem({ dtype: 'fp16', batch: 1, nheadQ: 1, hdimQ: 64, seqlenQ: 8 }))).toEqual([]);
  });
});
