// Every catalog instance emits exactly the source whose sha256 is committed in
// tools/workspace/emitted-sources.sha256.json: a refactor that should leave the kernels alone
// fails here, naming the instances it changed. Emission is pure TypeScript (no nvcc), so this runs
// on every machine.
import { beforeAll, describe, expect, it } from 'vitest';
import { duplicateKeys, EMITTED_SOURCE_CATALOGS, emittedSources, sha256Of, type EmittedSourceEntry } from './emittedSources.ts';
import {
  describeManifestDiff,
  diffManifests,
  formatManifest,
  manifestsAgree,
  parseManifest,
  readManifest,
} from './emittedSourcesManifest.ts';

describe('emitted kernel sources', () => {
  let current: EmittedSourceEntry[] = [];
  // Emitting every instance takes about 30 s alone; on CI's two cores beside the nvcc compile specs
  // it once took over 120 s, so the hook gets ten minutes.
  beforeAll(() => {
    current = emittedSources();
  }, 600_000);

  it('every instance emits the source whose sha256 the committed manifest holds', () => {
    const diff = diffManifests(readManifest(), current);
    expect(manifestsAgree(diff), describeManifestDiff(diff)).toBe(true);
  });

  it('instance names are unique per target, so each manifest entry names one kernel', () => {
    expect(duplicateKeys(current)).toEqual([]);
  });

  it('covers every catalog, each with instances', () => {
    expect(EMITTED_SOURCE_CATALOGS.filter((c) => c.instances.length === 0).map((c) => c.catalog)).toEqual([]);
    expect(current.length).toBe(EMITTED_SOURCE_CATALOGS.reduce((n, c) => n + c.instances.length, 0));
    expect(new Set(current.map((e) => e.target))).toEqual(new Set(['sm_80', 'sm_90a', 'gfx942']));
  });
});

describe('emitted-sources manifest', () => {
  const entry = (name: string, target: string, text: string): EmittedSourceEntry => ({ name, target, sha256: sha256Of(text) });
  const committed = [entry('a', 'sm_80', 'x'), entry('a', 'sm_90a', 'x'), entry('b', 'sm_90a', 'y')];

  it('round-trips through its file format', () => {
    expect(parseManifest(formatManifest(committed))).toEqual(committed);
    expect(() => parseManifest('{"instances":[{"name":"a","target":"sm_80","sha256":"zz"}]}')).toThrow(/not an emitted-sources manifest/);
  });

  it('names changed, new and gone instances per target, and what to run', () => {
    const diff = diffManifests(committed, [entry('a', 'sm_80', 'x'), entry('a', 'sm_90a', 'x '), entry('c', 'gfx942', 'z')]);
    expect(diff).toEqual({ changed: ['a (sm_90a)'], added: ['c (gfx942)'], removed: ['b (sm_90a)'] });
    expect(manifestsAgree(diff)).toBe(false);
    expect(describeManifestDiff(diff)).toMatch(
      /source changed \(1\):\n {2}a \(sm_90a\)\n.*\n.*\n.*\n.*\n.*npm run sources:manifest -- --write/,
    );
    expect(manifestsAgree(diffManifests(committed, [...committed].reverse()))).toBe(true);
  });

  it('lists the first keys of a long diff and counts the rest', () => {
    const many = Array.from({ length: 25 }, (_, i) => `k${String(i).padStart(2, '0')} (sm_90a)`);
    const text = describeManifestDiff({ changed: many, added: [], removed: [] }, 20);
    expect(text).toContain('k19 (sm_90a)');
    expect(text).not.toContain('k20 (sm_90a)');
    expect(text).toContain('… and 5 more');
  });
});
