// planFfpa, ffpaSlicePlans and ffpaSliceProblem: for every FFPA head-dim pair, dtype and mask (none,
// causal, sliding window) the plan is one CTA for d_v ≤ 512, a cluster of two CTAs (one slice of all
// of O, an instance of d_v/2 columns per CTA) for d = d_v ∈ {640, 768}, else ffpaColumnSlices(hdimV)
// (also with `clusters: false`), each run by the catalog instance of its dtype, d, width and mask
// kind; the description says which; a slice's launch problem
// keeps the strides and writes LSE only from the first slice; a custom catalog without an instance
// throws NoFfpaInstanceError; a bad problem throws FmhaFwdArgumentError before any dispatch.
import { FmhaFwdArgumentError, type CheckedFmhaFwdProblem, type FmhaFwdDType } from '@tilekit/fmha';
import type { FmhaFwdInstance } from '@tilekit/fmha-launch';
import { describe, expect, it } from 'vitest';
import { checkFfpaProblem, type FfpaProblem } from './checkFfpaProblem.ts';
import { FFPA_CATALOG } from './ffpaCatalog.ts';
import { ffpaColumnSlices } from './ffpaColumnSlices.ts';
import { NoFfpaInstanceError } from './ffpaDispatch.ts';
import { FFPA_HEAD_DIMS } from './ffpaHeadDims.ts';
import { FFPA_SM80_CATALOG } from './sm80/ffpaSm80Catalog.ts';
import { ffpaSlicePlans, ffpaSliceProblem, planFfpa } from './ffpaPlan.ts';

const DTYPES: readonly FmhaFwdDType[] = ['fp16', 'bf16'];
const MASKS = [undefined, 't', 't:40,3'] as const;

function ffpaProblem(dtype: FmhaFwdDType, hdimQ: number, hdimV: number, mask: string | undefined, lse = true): FfpaProblem {
  return {
    dtype,
    batch: 2,
    nheadQ: 4,
    nheadK: 2,
    hdimQ,
    hdimV,
    seqlenQ: 100,
    seqlenK: 130,
    ...(mask === undefined ? {} : { mask }),
    lse,
  };
}

/** The head dims the default plan runs as a cluster of two CTAs: d = d_v ∈ {640, 768}. */
const CLUSTER_DIMS = [640, 768];
const isCluster = (hdimQ: number, hdimV: number): boolean => hdimQ === hdimV && CLUSTER_DIMS.includes(hdimV);

describe('planFfpa on the sm_80 path: every head-dim pair × dtype × mask', () => {
  it('slices of at most 256 columns (one CTA up to d_v 256), each the sm_80 instance of its dtype, d, width and mask kind', () => {
    for (const { hdimQ, hdimV } of FFPA_HEAD_DIMS)
      for (const dtype of DTYPES)
        for (const mask of MASKS) {
          const plan = planFfpa(ffpaProblem(dtype, hdimQ, hdimV, mask), { path: 'sm80' });
          expect(plan.path).toBe('sm80');
          expect(plan.slices.map(({ offset, width }) => ({ offset, width }))).toEqual(ffpaColumnSlices(hdimV, 256));
          for (const s of plan.slices) {
            expect(s.instance.policy).toMatchObject({
              dtype,
              headDim: hdimQ,
              headDimV: s.width,
              mask: mask === undefined ? 'none' : 'window',
            });
            expect(s.instance.name).toMatch(/^ffpa_fwd_sm80_/);
          }
          expect(plan.description).toMatch(
            new RegExp(`^d${hdimQ} dv${hdimV} \\(sm_80 path\\): ${plan.slices.length} CTAs? per 64 query rows`),
          );
        }
  });

  it('takes only the path’s instances from a mixed catalog, and says so when none fits', () => {
    const p = checkFfpaProblem(ffpaProblem('bf16', 512, 512, undefined));
    const mixed = [...FFPA_CATALOG, ...FFPA_SM80_CATALOG];
    expect(ffpaSlicePlans(p, { catalog: mixed }).map((s) => s.instance.name)).toEqual(ffpaSlicePlans(p).map((s) => s.instance.name));
    expect(ffpaSlicePlans(p, { catalog: mixed, path: 'sm80' }).map((s) => s.instance.name)).toEqual(
      ffpaSlicePlans(p, { path: 'sm80' }).map((s) => s.instance.name),
    );
    expect(() => ffpaSlicePlans(p, { catalog: FFPA_CATALOG, path: 'sm80' })).toThrow(NoFfpaInstanceError);
  });
});

describe('planFfpa: every head-dim pair × dtype × mask', () => {
  for (const { hdimQ, hdimV } of FFPA_HEAD_DIMS)
    for (const dtype of DTYPES)
      it(`${dtype} d${hdimQ} dv${hdimV}`, () => {
        for (const mask of MASKS) {
          const plan = planFfpa(ffpaProblem(dtype, hdimQ, hdimV, mask));
          const cluster = isCluster(hdimQ, hdimV);
          const columns = cluster ? [{ offset: 0, width: hdimV }] : ffpaColumnSlices(hdimV);
          expect(plan.problem.hdimV).toBe(hdimV);
          expect(plan.slices.map(({ offset, width }) => ({ offset, width }))).toEqual(columns);
          for (const s of plan.slices) {
            const policy = s.instance.policy;
            expect(policy.dtype).toBe(dtype);
            expect(policy.headDim).toBe(hdimQ);
            expect(policy.headDimV).toBe(cluster ? hdimV / 2 : s.width);
            expect(s.instance.clusterCtas).toBe(cluster ? 2 : 1);
            expect(policy.qkSource?.tag).toBe(cluster ? 'cluster' : 'chunked');
            expect(policy.mask).toBe(mask === undefined ? 'none' : 'window');
            expect(policy.splitKv).toBe(false);
            expect(s.instance.name).toMatch(/^ffpa_fwd_sm90_/);
            expect(s.instance.name.endsWith('_qkc4_cl2')).toBe(cluster);
            expect(FFPA_CATALOG).toContain(s.instance);
          }
          const head = `d${hdimQ} dv${hdimV}: `;
          if (cluster) {
            expect(plan.description).toContain(`${head}a cluster of 2 CTAs per 64 query rows`);
            expect(plan.description).toContain(`each Q·Kᵀ over ${hdimQ / 2} columns of d`);
            expect(plan.description).toContain(`and ${hdimV / 2} columns of O`);
            expect(plan.description).not.toMatch(/recomputed|O columns/);
          } else if (columns.length === 1) {
            expect(plan.description).toBe(`${head}1 CTA per 64 query rows`);
          } else {
            expect(plan.description).toContain(`${head}${columns.length} CTAs per 64 query rows, O columns `);
            for (const c of columns) expect(plan.description).toContain(`[${c.offset},${c.offset + c.width})`);
            expect(plan.description).toMatch(/S recomputed in each$/);
            expect(plan.description).not.toMatch(/cluster/);
          }
        }
      });

  it('with clusters: false every pair runs as its column slices, each on a one-CTA instance (the same plan wherever the default has no cluster)', () => {
    for (const { hdimQ, hdimV } of FFPA_HEAD_DIMS)
      for (const mask of MASKS) {
        const problem = ffpaProblem('bf16', hdimQ, hdimV, mask);
        const plan = planFfpa(problem, { clusters: false });
        expect(plan.slices.map(({ offset, width }) => ({ offset, width }))).toEqual(ffpaColumnSlices(hdimV));
        for (const s of plan.slices) {
          expect(s.instance.clusterCtas).toBe(1);
          expect(s.instance.policy.headDimV).toBe(s.width);
          expect(s.instance.policy.qkSource?.tag).toBe('chunked');
          expect(FFPA_CATALOG).toContain(s.instance);
        }
        const byDefault = planFfpa(problem);
        if (!isCluster(hdimQ, hdimV)) {
          expect(plan.slices.map((s) => s.instance)).toEqual(byDefault.slices.map((s) => s.instance));
          expect(plan.description).toBe(byDefault.description);
        } else {
          expect(plan.slices).toHaveLength(2);
          expect(plan.description).toContain(`d${hdimQ} dv${hdimV}: 2 CTAs per 64 query rows, O columns`);
          expect(plan.description).not.toBe(byDefault.description);
        }
        // ffpaSlicePlans is the plan's slices.
        expect(ffpaSlicePlans(checkFfpaProblem(problem), { clusters: false })).toEqual(plan.slices);
        expect(ffpaSlicePlans(checkFfpaProblem(problem))).toEqual(byDefault.slices);
      }
  });

  it('d768 as a cluster: one slice of all 768 columns, an instance of 384 columns per CTA launched as [1,2,1] clusters', () => {
    const plan = planFfpa(ffpaProblem('fp16', 768, 768, 't'));
    expect(plan.slices).toHaveLength(1);
    const s = plan.slices[0]!;
    expect([s.offset, s.width]).toEqual([0, 768]);
    expect(s.instance.name).toBe('ffpa_fwd_sm90_fp16_d768x384_window_64x64_s2_split0_dvslices2_psmem_qkc4_cl2');
    expect(s.instance.launch(2, 4, 100)).toMatchObject({ grid: [2, 8, 2], cluster: [1, 2, 1] });
    expect(plan.description).toBe(
      'd768 dv768: a cluster of 2 CTAs per 64 query rows, each Q·Kᵀ over 384 columns of d (partial S exchanged through ' +
        'distributed shared memory) and 384 columns of O',
    );
    // The slice's launch problem is the whole problem (all columns, LSE kept).
    const sp = ffpaSliceProblem(plan.problem, s);
    expect(sp.hdimV).toBe(768);
    expect(sp.lse).toBe(true);
  });

  it('a catalog without the cluster instances falls back to column slices; a catalog of cluster instances only has no slice instances', () => {
    const columnsOnly = FFPA_CATALOG.filter((i) => i.clusterCtas === 1);
    expect(columnsOnly.length).toBeLessThan(FFPA_CATALOG.length);
    for (const d of CLUSTER_DIMS) {
      const plan = planFfpa(ffpaProblem('fp16', d, d, undefined), { catalog: columnsOnly });
      expect(plan.slices.map((s) => s.width)).toEqual([d / 2, d / 2]);
      expect(plan.slices[0]!.instance).toBe(plan.slices[1]!.instance);
      expect(plan.slices[0]!.instance.clusterCtas).toBe(1);
    }
    const clustersOnly = FFPA_CATALOG.filter((i) => i.clusterCtas === 2);
    expect(planFfpa(ffpaProblem('bf16', 640, 640, 't'), { catalog: clustersOnly }).slices[0]!.instance.clusterCtas).toBe(2);
    expect(() => planFfpa(ffpaProblem('bf16', 640, 640, 't'), { catalog: clustersOnly, clusters: false })).toThrow(NoFfpaInstanceError);
    expect(() => planFfpa(ffpaProblem('bf16', 1024, 1024, 't'), { catalog: clustersOnly })).toThrow(NoFfpaInstanceError);
  });

  it('slices of one width share one instance (d1024: 2 × 512), slices of different widths do not (d576: 320 + 256)', () => {
    const even = planFfpa(ffpaProblem('fp16', 1024, 1024, undefined));
    expect(even.slices).toHaveLength(2);
    expect(even.slices[0]!.instance).toBe(even.slices[1]!.instance);
    expect(even.description).toMatch(/S recomputed in each/);
    const uneven = planFfpa(ffpaProblem('bf16', 576, 576, 't'));
    expect(uneven.slices[0]!.instance).not.toBe(uneven.slices[1]!.instance);
    expect(planFfpa(ffpaProblem('bf16', 512, 512, 't')).description).not.toMatch(/recomputed/);
  });

  it('takes a checked problem as is', () => {
    const checked = checkFfpaProblem(ffpaProblem('bf16', 704, 704, 't:40,3'));
    const plan = planFfpa(checked);
    expect(plan.problem).toBe(checked);
    expect(plan.slices.map((s) => s.width)).toEqual([384, 320]);
  });
});

describe('ffpaSliceProblem', () => {
  it('sets hdimV to the slice width, keeps every stride, and asks for LSE from the slice at offset 0 only', () => {
    for (const lse of [true, false]) {
      const p = checkFfpaProblem({ ...ffpaProblem('fp16', 1024, 1024, 't', lse), inputLayout: 'bshd', outputLayout: 'bhsd' });
      for (const slice of ffpaColumnSlices(p.hdimV)) {
        const s = ffpaSliceProblem(p, slice);
        expect(s.hdimV).toBe(slice.width);
        expect(s.lse).toBe(lse && slice.offset === 0);
        for (const k of ['qStrides', 'kStrides', 'vStrides', 'oStrides'] as const) expect(s[k]).toEqual(p[k]);
        expect(s.oStrides.row).toBe(1024);
        const { hdimV: _h, lse: _l, ...rest } = s;
        const { hdimV: _ph, lse: _pl, ...prest } = p;
        expect(rest).toEqual(prest);
      }
    }
  });

  it('works on an offset other than the first slice of the default split (any offset ≠ 0 drops LSE)', () => {
    const p = checkFfpaProblem(ffpaProblem('bf16', 576, 512, undefined));
    expect(ffpaSliceProblem(p, { offset: 64, width: 128 })).toMatchObject({ hdimV: 128, lse: false });
    expect(ffpaSliceProblem(p, { offset: 0, width: 128 })).toMatchObject({ hdimV: 128, lse: true });
  });
});

describe('planFfpa: errors', () => {
  it('a custom catalog without the needed instance throws NoFfpaInstanceError (code ffpa/no-instance)', () => {
    // d576 dv576 needs a 320- and a 256-column instance; leave out the 256-column ones.
    const catalog = FFPA_CATALOG.filter((i) => !(i.policy.headDim === 576 && i.policy.headDimV === 256));
    expect(planFfpa(ffpaProblem('fp16', 576, 512, 't'), { catalog }).slices).toHaveLength(1);
    let error: unknown;
    try {
      planFfpa(ffpaProblem('fp16', 576, 576, 't'), { catalog });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(NoFfpaInstanceError);
    const e = error as NoFfpaInstanceError;
    expect(e.code).toBe('ffpa/no-instance');
    expect(e.problem.hdimV).toBe(256);
    expect(e.problem.hdimQ).toBe(576);
    expect(() => planFfpa(ffpaProblem('bf16', 320, 320, undefined), { catalog: [] })).toThrow(NoFfpaInstanceError);
  });

  it('a bad problem throws FmhaFwdArgumentError before any dispatch (the catalog is never read)', () => {
    const reads: PropertyKey[] = [];
    const catalog = new Proxy([] as FmhaFwdInstance[], {
      get(target, key, receiver) {
        reads.push(key);
        return Reflect.get(target, key, receiver) as unknown;
      },
    });
    for (const over of [{ hdimQ: 256 }, { splitKv: 2 }, { mask: 'g:3,4' }, { nheadK: 3 }]) {
      const bad = { ...ffpaProblem('fp16', 512, 512, undefined), ...over } as FfpaProblem;
      expect(() => planFfpa(bad, { catalog })).toThrow(FmhaFwdArgumentError);
    }
    expect(reads).toEqual([]);
    // The same catalog is read (and found wanting) for a good problem.
    expect(() => planFfpa(ffpaProblem('fp16', 512, 512, undefined), { catalog })).toThrow(NoFfpaInstanceError);
    expect(reads.length).toBeGreaterThan(0);
  });

  it('a checked problem is not re-checked: planFfpa dispatches what it is given', () => {
    // d960 with dv448 is no FFPA pair (checkFfpaProblem rejects it), but d960's second slice has a 448-column instance.
    const checked: CheckedFmhaFwdProblem = { ...checkFfpaProblem(ffpaProblem('fp16', 960, 960, undefined)), hdimV: 448 };
    expect(() => checkFfpaProblem({ ...ffpaProblem('fp16', 960, 960, undefined), hdimV: 448 })).toThrow(FmhaFwdArgumentError);
    const plan = planFfpa(checked);
    expect(plan.problem).toBe(checked);
    expect(plan.slices.map((s) => [s.offset, s.width, s.instance.policy.headDim, s.instance.policy.headDimV])).toEqual([
      [0, 448, 960, 448],
    ]);
  });
});
