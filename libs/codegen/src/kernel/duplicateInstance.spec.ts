// duplicateInstance: undefined for unique catalogs; else the first shared name (checked before hashes) or hash.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { duplicateInstance } from './duplicateInstance.ts';

const inst = (name: string, hash: string) => ({ name, key: { hash } });

describe('duplicateInstance', () => {
  it('finds a shared name first, then a shared hash', () => {
    expect(duplicateInstance([inst('a', '1'), inst('b', '2')])).toBeUndefined();
    expect(duplicateInstance([inst('a', '1'), inst('a', '2')])).toEqual({ field: 'name', value: 'a' });
    expect(duplicateInstance([inst('a', '1'), inst('b', '1')])).toEqual({ field: 'hash', value: '1' });
  });

  it('property: undefined exactly when names and hashes are both distinct', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom('a', 'b', 'c', 'd'), fc.constantFrom('1', '2', '3', '4')), { maxLength: 5 }),
        (pairs) => {
          const unique = new Set(pairs.map((p) => p[0])).size === pairs.length && new Set(pairs.map((p) => p[1])).size === pairs.length;
          expect(duplicateInstance(pairs.map(([n, h]) => inst(n, h))) === undefined).toBe(unique);
        },
      ),
    );
  });
});
