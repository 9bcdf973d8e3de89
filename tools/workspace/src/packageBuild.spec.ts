import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
// @ts-expect-error -- a plain .mjs script without types; the test uses two of its pure helpers
import { guideSnippets, publishablePackages } from './consumerInstall.mjs';
import { workspaceRoot } from './workspaceProjects.ts';

// The build (tsc -b over project references) and the published shape of every library and kernel
// package stay in step with package.json: a new dependency without its reference, an export
// without its built file, or missing metadata fails here rather than in a user's install.

interface PackageJson {
  name: string;
  private?: boolean;
  license?: string;
  repository?: { directory?: string };
  engines?: { node?: string };
  files?: string[];
  dependencies?: Record<string, string>;
  exports: Record<string, Record<string, string>>;
}

interface BuildConfig {
  compilerOptions: { rootDir: string; outDir: string };
  references: { path: string }[];
}

const readJson = <T>(path: string): T => JSON.parse(readFileSync(join(workspaceRoot, path), 'utf8')) as T;
const packages = publishablePackages(workspaceRoot) as { dir: string; name: string }[];
const dirOf = Object.fromEntries(packages.map((p) => [p.name, p.dir]));

describe('built packages', () => {
  it('every library and kernel package is publishable and listed in the root build', () => {
    const names = packages.map((p) => p.name).sort();
    expect(names).toEqual(expect.arrayContaining(['@tilekit/layout', '@tilekit/fmha', '@tilekit/runtime', '@tilekit/kernel-fmha-fwd']));
    const root = readJson<{ references: { path: string }[] }>('tsconfig.build.json');
    expect(root.references.map((r) => r.path.replace(/^\.\//, '').replace('/tsconfig.build.json', '')).sort()).toEqual(
      packages.map((p) => p.dir).sort(),
    );
  });

  it.each(packages.map((p) => [p.name, p.dir]))('%s: references = its workspace dependencies', (_name, dir) => {
    const pkg = readJson<PackageJson>(`${dir}/package.json`);
    const build = readJson<BuildConfig>(`${dir}/tsconfig.build.json`);
    const want = Object.keys(pkg.dependencies ?? {})
      .filter((d) => dirOf[d])
      .map((d) => `../../${dirOf[d]}/tsconfig.build.json`)
      .sort();
    expect(build.references.map((r) => r.path).sort()).toEqual(want);
    expect(build.compilerOptions).toMatchObject({ rootDir: 'src', outDir: 'dist' });
  });

  it.each(packages.map((p) => [p.name, p.dir]))(
    '%s: exports point at dist (types + import) and keep the source condition',
    (_name, dir) => {
      const pkg = readJson<PackageJson>(`${dir}/package.json`);
      for (const [subpath, target] of Object.entries(pkg.exports)) {
        const stem = target['@tilekit/source']!.replace(/^\.\/src\//, '').replace(/\.ts$/, '');
        expect(Object.keys(target), subpath).toEqual(['@tilekit/source', 'types', 'import']);
        expect(target, subpath).toMatchObject({ types: `./dist/${stem}.d.ts`, import: `./dist/${stem}.js` });
        expect(existsSync(join(workspaceRoot, dir, target['@tilekit/source']!)), subpath).toBe(true);
      }
    },
  );

  it.each(packages.map((p) => [p.name, p.dir]))('%s: metadata fit for publishing', (_name, dir) => {
    const pkg = readJson<PackageJson>(`${dir}/package.json`);
    expect(pkg.private).toBeUndefined();
    expect(pkg.license).toBe('MIT');
    expect(pkg.repository?.directory).toBe(dir);
    expect(pkg.engines?.node).toMatch(/^>=20/);
    expect(pkg.files).toEqual(expect.arrayContaining(['dist', 'README.md']));
    expect(existsSync(join(workspaceRoot, dir, 'README.md'))).toBe(true);
  });
});

describe('the consumer guide', () => {
  it('finds the runnable snippets of a markdown page by their file= marker', () => {
    const md = ['text', '```ts file=a.ts', 'const a = 1;', '```', '```sh', 'npm ci', '```', '```js file=b.mjs', 'x();', '```', ''].join(
      '\n',
    );
    expect(guideSnippets(md)).toEqual([
      { lang: 'ts', file: 'a.ts', code: 'const a = 1;\n' },
      { lang: 'js', file: 'b.mjs', code: 'x();\n' },
    ]);
  });

  it('docs/using-tilekit.md imports layout, fmha and runtime in its snippets', () => {
    const snippets = guideSnippets(readFileSync(join(workspaceRoot, 'docs', 'using-tilekit.md'), 'utf8')) as { code: string }[];
    const code = snippets.map((s) => s.code).join('\n');
    for (const pkg of ['@tilekit/layout', '@tilekit/fmha', '@tilekit/runtime']) expect(code).toContain(`from '${pkg}'`);
  });
});
