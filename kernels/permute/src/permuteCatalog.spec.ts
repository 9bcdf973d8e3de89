import { describe, expect, it } from 'vitest';
import { CatalogError, checkCatalog, findPermuteInstance, PERMUTE_CATALOG } from './permuteCatalog.ts';
import { HeadPermuteInstance } from './permuteInstance.ts';

describe('permute catalog', () => {
  it('holds 66 instances with unique names and hashes, names usable as entry points', () => {
    expect(PERMUTE_CATALOG).toHaveLength(66);
    expect(() => checkCatalog(PERMUTE_CATALOG)).not.toThrow();
    for (const i of PERMUTE_CATALOG) {
      expect(i.name).toMatch(/^[A-Za-z_][A-Za-z0-9_]*$/);
      expect(i.signature.name).toBe(i.name);
      expect(i.key.hash).toMatch(/^[0-9a-f]{16}$/);
    }
  });

  it('keys are deterministic: rebuilding an instance gives the same name and hash', () => {
    const again = new HeadPermuteInstance({ dtype: 'fp16', vectorBytes: 16, threads: 256, unroll: 2, rows: 2 });
    const original = findPermuteInstance('permute_head_fp16_v16_t256_u2_r2')!;
    expect(again.key.hash).toBe(original.key.hash);
    expect(again.source()).toBe(original.source());
  });

  it('refuses duplicates', () => {
    const i = PERMUTE_CATALOG[0]!;
    expect(() => checkCatalog([i, i])).toThrow(CatalogError);
  });

  it('each instance emits one extern "C" entry named after it, with the declared parameters', () => {
    for (const i of PERMUTE_CATALOG) {
      const src = i.source();
      const params = i.signature.layout.fields.map((f) => f.name);
      expect(src).toMatch(new RegExp(`extern "C" __global__ void __launch_bounds__\\(${i.threads}\\) ${i.name}\\(`));
      expect(src.match(/__global__/g)).toHaveLength(1);
      const list = src.slice(src.indexOf(`${i.name}(`) + i.name.length + 1, src.indexOf(') {'));
      expect(list.split(', ').map((p) => p.split(' ').at(-1))).toEqual(params);
    }
  });
});
