import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NoInstanceError, selectInstance, type InstanceRules } from './instanceDispatch.ts';

interface Toy {
  readonly name: string;
  readonly maxSize: number;
  readonly dtype: string;
  readonly rank: number;
}

const rulesFor = (size: number, dtype: string): InstanceRules<Toy> => ({
  unsupported: (i) => [
    ...(i.dtype !== dtype ? [`dtype must be ${i.dtype}`] : []),
    ...(size > i.maxSize ? [`size must be <= ${i.maxSize}`] : []),
  ],
  relevant: (i) => i.dtype === dtype,
  preference: (i) => [i.rank],
});

describe('selectInstance', () => {
  const catalog: Toy[] = [
    { name: 'a', maxSize: 10, dtype: 'fp16', rank: 2 },
    { name: 'b', maxSize: 100, dtype: 'fp16', rank: 1 },
    { name: 'c', maxSize: 100, dtype: 'bf16', rank: 0 },
    { name: 'd', maxSize: 100, dtype: 'fp16', rank: 1 },
  ];

  it('picks the lowest preference among fitting instances, catalog order breaking ties', () => {
    expect(selectInstance(catalog, rulesFor(5, 'fp16'))).toEqual({ instance: catalog[1] });
    expect(selectInstance(catalog, rulesFor(5, 'bf16'))).toEqual({ instance: catalog[2] });
  });

  it('lists the failed predicates of relevant instances and counts the rest', () => {
    expect(selectInstance(catalog, rulesFor(1000, 'fp16'))).toEqual({
      rejections: [
        { instance: 'a', reasons: ['size must be <= 10'] },
        { instance: 'b', reasons: ['size must be <= 100'] },
        { instance: 'd', reasons: ['size must be <= 100'] },
      ],
      others: 1,
    });
  });

  it('agrees with a brute-force minimum over random catalogs', () => {
    const toy = fc.record({ name: fc.string(), maxSize: fc.nat(50), dtype: fc.constantFrom('fp16', 'bf16'), rank: fc.nat(3) });
    fc.assert(
      fc.property(fc.array(toy, { maxLength: 12 }), fc.nat(60), fc.constantFrom('fp16', 'bf16'), (cat, size, dtype) => {
        const rules = rulesFor(size, dtype);
        const fitting = cat.filter((i) => rules.unsupported(i).length === 0);
        const result = selectInstance(cat, rules);
        if (fitting.length === 0) {
          expect('rejections' in result).toBe(true);
          return;
        }
        const minRank = Math.min(...fitting.map((i) => i.rank));
        expect(result).toEqual({ instance: fitting.find((i) => i.rank === minRank) });
      }),
    );
  });

  it('NoInstanceError names the operator, each instance and its reasons', () => {
    const error = new NoInstanceError('gemm', 'fp16 m=1 n=2 k=3', [{ instance: 'x', reasons: ['k must be a multiple of 8'] }], 2);
    expect(error.code).toBe('gemm/no-instance');
    expect(error.message).toBe(
      [
        'no gemm instance runs fp16 m=1 n=2 k=3:',
        '  x: k must be a multiple of 8',
        '  (2 instance(s) of other kinds or dtypes not listed)',
      ].join('\n'),
    );
  });
});
