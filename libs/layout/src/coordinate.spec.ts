import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { makeNaiveTensorDescriptor, transformTensorDescriptor } from './descriptor.ts';
import { makeTensorCoordinate, moveTensorAdaptorCoordinate, moveTensorCoordinate } from './coordinate.ts';
import { evaluateSymInt } from './symbolic/evaluate.ts';
import { bindingsArb, descriptorArb, indexArb } from './testing/arbitraries.ts';
import { merge, pad, passThrough, unmerge } from './transforms/index.ts';

const moveCase = (symbolic: boolean) =>
  descriptorArb({ symbolic }).chain((rd) =>
    bindingsArb(rd.symbols).chain((bindings) => {
      const lengths = rd.descriptor.lengths.map((l) => evaluateSymInt(l, bindings));
      return fc
        .tuple(
          indexArb(lengths),
          fc.array(fc.tuple(indexArb(lengths), fc.array(fc.boolean(), { minLength: lengths.length, maxLength: lengths.length })), {
            minLength: 1,
            maxLength: 5,
          }),
        )
        .map(([start, targets]) => ({
          rd,
          bindings,
          start,
          // Each target keeps some dims where they are (zero steps prune transforms).
          path: targets.map(([t, keep]) => ({ target: t, keep })),
        }));
    }),
  );

describe('moveTensorCoordinate', () => {
  for (const symbolic of [false, true]) {
    test.prop([moveCase(symbolic)])(
      `equals recomputing from scratch for random steps, negative too (${symbolic ? 'symbolic' : 'static'})`,
      ({ rd, bindings, start, path }) => {
        const desc = rd.descriptor;
        const bound = desc.adaptor.bind(bindings);
        const coord = makeTensorCoordinate(desc, start, bindings);
        let current = [...start];
        for (const { target, keep } of path) {
          const next = target.map((t, i) => (keep[i] ? current[i]! : t));
          const step = next.map((x, i) => x - current[i]!);
          const before = [...coord.hidden];
          moveTensorCoordinate(desc, coord, step);
          const fresh = bound.hiddenIndex(next);
          expect(coord.hidden, rd.recipe).toEqual(fresh);
          expect(coord.offset).toBe(desc.calculateOffset(next, bindings));
          expect(coord.isValidAssumingTopInRange).toBe(desc.isValidIndex(next, bindings));
          // Only the touched transforms may change hidden dims.
          const run = new Set(bound.transformsTouchedBy(step.map((s) => s !== 0)));
          desc.adaptor.transforms.forEach((_, i) => {
            if (!run.has(i)) for (const id of desc.adaptor.lowerDimHiddenIds[i]!) expect(coord.hidden[id]).toBe(before[id]);
          });
          current = next;
        }
      },
    );
  }

  it('runs no transform for a zero step and only the chain below a moved dim otherwise', () => {
    const d0 = makeNaiveTensorDescriptor([4, 6, 8], [48, 8, 1]);
    const d = transformTensorDescriptor(d0, [merge([4, 6]), passThrough(8)], [[0, 1], [2]], [[0], [1]]);
    const bound = d.adaptor.bind();
    expect(bound.transformsTouchedBy([false, false])).toEqual([]);
    expect(bound.transformsTouchedBy([false, true])).toEqual([2, 0]);
    expect(bound.transformsTouchedBy([true, false])).toEqual([1, 0]);
    const c = makeTensorCoordinate(d, [5, 3]);
    expect(moveTensorAdaptorCoordinate(d.adaptor, c, [0, 2])).toEqual([2]);
    expect(c.index).toEqual([5, 5]);
    expect(c.offset).toBe(d.calculateOffset([5, 5]));
  });

  it('tracks validity through pads and rejects coordinates of another descriptor', () => {
    const d0 = makeNaiveTensorDescriptor([5], [1]);
    const d = transformTensorDescriptor(d0, [pad(5, 2, 1)], [[0]], [[0]]);
    const c = makeTensorCoordinate(d, [0]);
    const seen: boolean[] = [c.isValid];
    for (let i = 1; i < 8; i++) seen.push(moveTensorCoordinate(d, c, [1]).isValid);
    expect(seen).toEqual([false, false, true, true, true, true, true, false]);
    const other = transformTensorDescriptor(d0, [unmerge([5, 1])], [[0]], [[0, 1]]);
    expect(() => moveTensorCoordinate(other, c, [1, 0])).toThrow(expect.objectContaining({ code: 'layout/coordinate-mismatch' }));
    expect(() => moveTensorCoordinate(d, c, [1, 0])).toThrow(expect.objectContaining({ code: 'layout/arity-mismatch' }));
  });
});
