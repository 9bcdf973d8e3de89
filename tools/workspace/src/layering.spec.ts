import { ESLint } from 'eslint';
import { beforeAll, describe, expect, it } from 'vitest';
// eslint-disable-next-line @nx/enforce-module-boundaries -- the test reads the real lint config it checks
import { layerRules, purePackageGlobs } from '../../../eslint.config.mjs';
import { ensureProjectGraph, readWorkspaceProjects, workspaceRoot } from './workspaceProjects.ts';

// Lints a made-up source file placed (virtually) inside a package, so the real config and the real
// nx project graph decide.
async function lintAs(filePath: string, code: string): Promise<string[]> {
  const eslint = new ESLint({ cwd: workspaceRoot });
  const [result] = await eslint.lintText(code, { filePath: `${workspaceRoot}/${filePath}` });
  return (result?.messages ?? []).map((m) => `${m.ruleId ?? 'fatal'}: ${m.message}`);
}

describe('layering (docs/architecture.md) enforced by lint', () => {
  beforeAll(() => ensureProjectGraph(), 60_000);

  it('rejects an import from a layer above: host (layer:host) importing codegen', async () => {
    const messages = await lintAs('libs/host/src/__probe__.ts', "import { x } from '@tilekit/codegen';\nexport const y = x;\n");
    expect(messages.some((m) => m.startsWith('@nx/enforce-module-boundaries') && m.includes('layer:host'))).toBe(true);
  });

  it('rejects a pure library importing a node-only package: layout importing host', async () => {
    const messages = await lintAs('libs/layout/src/__probe__.ts', "import { x } from '@tilekit/host';\nexport const y = x;\n");
    expect(messages.filter((m) => m.startsWith('@nx/enforce-module-boundaries')).length).toBeGreaterThan(0);
  });

  it('rejects node built-ins in pure library sources', async () => {
    const messages = await lintAs(
      'libs/numeric/src/__probe__.ts',
      "import { readFileSync } from 'node:fs';\nexport const y = readFileSync;\n",
    );
    expect(messages.some((m) => m.startsWith('no-restricted-imports'))).toBe(true);
  });

  it('rejects a kernel package importing another kernel package: sparge importing kernel-fmha-fwd', async () => {
    const messages = await lintAs(
      'kernels/sparge/src/__probe__.ts',
      "import { FMHA_FWD_CATALOG } from '@tilekit/kernel-fmha-fwd';\nexport const y = FMHA_FWD_CATALOG;\n",
    );
    expect(messages.some((m) => m.startsWith('@nx/enforce-module-boundaries') && m.includes('layer:kernels'))).toBe(true);
  });

  it('accepts a kernel package importing the shared attention libraries: sparge importing fmha and fmha-launch', async () => {
    const messages = await lintAs(
      'kernels/sparge/src/__probe__.ts',
      "import { FMHA_MAX_SEQLEN } from '@tilekit/fmha';\nimport { fmhaFwdTensorMaps } from '@tilekit/fmha-launch';\n" +
        'export const y = [FMHA_MAX_SEQLEN, fmhaFwdTensorMaps];\n',
    );
    expect(messages).toEqual([]);
  });

  it('accepts an import from a layer below: layout importing codegen and numeric', async () => {
    const messages = await lintAs(
      'libs/layout/src/__probe__.ts',
      "import { x } from '@tilekit/codegen';\nimport { z } from '@tilekit/numeric';\nexport const y = [x, z];\n",
    );
    expect(messages).toEqual([]);
  });
});

describe('package tags', () => {
  const projects = readWorkspaceProjects();

  it('every package has exactly one layer tag that the lint rules know', () => {
    const knownLayers = new Set(layerRules.map((r) => r.sourceTag).filter((t) => t.startsWith('layer:')));
    for (const project of projects) {
      const layers = project.tags.filter((t) => t.startsWith('layer:'));
      expect(layers, project.name).toHaveLength(1);
      expect(knownLayers.has(layers[0] ?? ''), `${project.name}: ${layers[0]}`).toBe(true);
    }
  });

  it('packages tagged platform:pure are exactly those whose sources the node built-in ban covers', () => {
    const pureDirs = projects.filter((p) => p.tags.includes('platform:pure')).map((p) => `${p.dir}/**`);
    for (const dir of pureDirs) expect(purePackageGlobs, dir).toContain(dir);
  });

  it('declared workspace dependencies respect the layer order', () => {
    const byName = new Map(projects.map((p) => [p.name, p]));
    for (const project of projects) {
      const layer = project.tags.find((t) => t.startsWith('layer:'));
      const rule = layerRules.find((r) => r.sourceTag === layer);
      const allowed = rule && 'onlyDependOnLibsWithTags' in rule ? rule.onlyDependOnLibsWithTags : ['*'];
      for (const dependency of project.dependencies) {
        const target = byName.get(dependency);
        if (!target || allowed.includes('*')) continue;
        expect(
          target.tags.some((t) => allowed.includes(t)),
          `${project.name} -> ${dependency}`,
        ).toBe(true);
      }
    }
  });
});
