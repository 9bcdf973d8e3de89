import { ArgumentError } from '@tilekit/numeric';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkDeviceRange } from './deviceRange.ts';

describe('checkDeviceRange', () => {
  it('accepts exactly the ranges that are large enough and aligned, naming the argument otherwise', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 1n, max: 1n << 40n }),
        fc.nat(1 << 20),
        fc.nat(1 << 20),
        fc.constantFrom(1, 2, 4, 16),
        (ptr, bytes, needed, align) => {
          const ok = bytes >= needed && ptr % BigInt(align) === 0n;
          if (ok) expect(checkDeviceRange('q', { ptr, bytes }, needed, align)).toEqual({ ptr, bytes });
          else expect(() => checkDeviceRange('q', { ptr, bytes }, needed, align)).toThrow(/^q: /);
        },
      ),
    );
  });

  it('rejects what is not a device range', () => {
    expect(() => checkDeviceRange('o', undefined, 0)).toThrow(ArgumentError);
    expect(() => checkDeviceRange('o', { ptr: 5, bytes: 8 } as never, 0)).toThrow(/device buffer/);
  });
});
