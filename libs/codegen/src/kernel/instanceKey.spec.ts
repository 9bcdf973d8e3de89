import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { isIdentifier } from '../expr.ts';
import { canonicalJson, instanceKey, type InstanceConfig } from './instanceKey.ts';

const configArb: fc.Arbitrary<InstanceConfig> = fc.dictionary(
  fc.stringMatching(/^[a-z][a-zA-Z0-9]{0,6}$/),
  fc.oneof(
    fc.integer({ min: -1000, max: 1000 }),
    fc.boolean(),
    fc.stringMatching(/^[a-z0-9_]{0,6}$/),
    fc.array(fc.integer({ min: 0, max: 64 }), { maxLength: 3 }),
  ),
  { minKeys: 1, maxKeys: 6 },
);

function reversed(c: InstanceConfig): InstanceConfig {
  return Object.fromEntries(Object.entries(c).reverse());
}

describe('instanceKey', () => {
  it('names from tagged values, in tag order, and hashes the whole config', () => {
    const key = instanceKey(
      'permute',
      { dtype: 'fp16', vectorBytes: 16, threads: 256, note: 'x' },
      { tags: { dtype: '', vectorBytes: 'v', threads: 't' } },
    );
    expect(key.name).toBe('permute_fp16_v16_t256');
    expect(key.hash).toMatch(/^[0-9a-f]{16}$/);
    expect(key.canonical).toBe('{"config":{"dtype":"fp16","note":"x","threads":256,"vectorBytes":16},"family":"permute"}');
    const other = instanceKey(
      'permute',
      { dtype: 'fp16', vectorBytes: 16, threads: 256, note: 'y' },
      { tags: { dtype: '', vectorBytes: 'v', threads: 't' } },
    );
    expect(other.name).toBe(key.name); // the untagged key is not in the name ...
    expect(other.hash).not.toBe(key.hash); // ... but it is in the hash
  });

  it('spells negative, fractional, boolean and array values as identifier parts', () => {
    const key = instanceKey('k', { a: -3, b: 1.5, c: true, d: [64, 32] }, { tags: { a: 'a', b: 'b', c: 'c', d: 'tile' } });
    expect(key.name).toBe('k_am3_b1p5_c1_tile64x32');
  });

  it('rejects what cannot be named or hashed', () => {
    expect(() => instanceKey('9lives', { a: 1 })).toThrow(/family/);
    expect(() => instanceKey('k', { a: 'x-y' }, { tags: { a: '' } })).toThrow(/config\.a/);
    expect(() => instanceKey('k', { a: 1 }, { tags: { b: '' } })).toThrow(/tags\.b/);
    expect(() => instanceKey('k', { a: Number.NaN })).toThrow(/finite/);
  });

  test.prop([configArb])('is deterministic and independent of key order', (config) => {
    const tags = Object.fromEntries(Object.keys(config).map((k) => [k, k]));
    const a = instanceKey('fam', config, { tags });
    const b = instanceKey('fam', reversed(config), { tags });
    expect(b.hash).toBe(a.hash);
    expect(b.canonical).toBe(a.canonical);
    expect(a.name).toBe(instanceKey('fam', config, { tags }).name);
    expect(isIdentifier(a.name)).toBe(true);
  });

  test.prop([configArb, configArb])('different configs hash differently', (x, y) => {
    fc.pre(canonicalJson(x) !== canonicalJson(y));
    expect(instanceKey('fam', x).hash).not.toBe(instanceKey('fam', y).hash);
  });
});
