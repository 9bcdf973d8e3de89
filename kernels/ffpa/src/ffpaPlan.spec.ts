// planFfpa and ffpaSliceProblem: for every FFPA head-dim pair, dtype and mask (none, causal, sliding
// window) the plan's slices are ffpaColumnSlices(hdimV), each run by the catalog instance of its
// dtype, d, slice width and mask kind; the description counts the CTAs; a slice's launch problem
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
import { ffpaSliceProblem, planFfpa } from './ffpaPlan.ts';

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

describe('planFfpa: every head-dim pair × dtype × mask', () => {
  for (const { hdimQ, hdimV } of FFPA_HEAD_DIMS)
    for (const dtype of DTYPES)
      it(`${dtype} d${hdimQ} dv${hdimV}`, () => {
        for (const mask of MASKS) {
          const plan = planFfpa(ffpaProblem(dtype, hdimQ, hdimV, mask));
          const columns = ffpaColumnSlices(hdimV);
          expect(plan.problem.hdimV).toBe(hdimV);
          expect(plan.slices.map(({ offset, width }) => ({ offset, width }))).toEqual(columns);
          for (const s of plan.slices) {
            const policy = s.instance.policy;
            expect(policy.dtype).toBe(dtype);
            expect(policy.headDim).toBe(hdimQ);
            expect(policy.headDimV).toBe(s.width);
            expect(policy.mask).toBe(mask === undefined ? 'none' : 'window');
            expect(policy.splitKv).toBe(false);
            expect(s.instance.name).toMatch(/^ffpa_fwd_sm90_/);
            expect(FFPA_CATALOG).toContain(s.instance);
          }
          const ctas = columns.length === 1 ? '1 CTA per 64 query rows' : `${columns.length} CTAs per 64 query rows`;
          expect(plan.description).toContain(`d${hdimQ} dv${hdimV}: ${ctas}`);
          for (const c of columns) expect(plan.description).toContain(`[${c.offset},${c.offset + c.width})`);
        }
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
