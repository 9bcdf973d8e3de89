#!/usr/bin/env node
// The packages as a user installs them: build, `npm pack` every publishable package (libs/*,
// kernels/*), install the tarballs into a fresh project outside the repository, then there
//   - import every package by name with plain node,
//   - check that the runtime's native addon was built under npm 11's install-script policy,
//   - run the snippets of docs/using-tilekit.md (blocks marked `file=NAME.mjs` with node,
//     `file=NAME.ts` with tsx) and type-check the .ts ones with `tsc --noEmit` (strict, no skipLibCheck).
// Prints one line per check and a closing "consumer: N passed, N failed"; exits 1 on any failure.
//
//   node tools/workspace/src/consumerInstall.mjs [--keep] [--skip-build]
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const GUIDE = join(repoRoot, 'docs', 'using-tilekit.md');
const results = [];

function usageError(message) {
  console.error(`consumer: ${message} (usage: node tools/workspace/src/consumerInstall.mjs [--keep] [--skip-build])`);
  process.exit(2);
}

function parseFlags() {
  try {
    return parseArgs({ options: { keep: { type: 'boolean' }, 'skip-build': { type: 'boolean' } } }).values;
  } catch (error) {
    return usageError(error.message);
  }
}

/** Runs a command; returns { ok, output } (stdout and stderr together, trimmed). */
function run(cmd, args, cwd, env = {}) {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', env: { ...process.env, ...env }, maxBuffer: 64 << 20 });
  const output = `${r.stdout ?? ''}${r.stderr ?? ''}${r.error ? String(r.error) : ''}`.trim();
  return { ok: r.status === 0, output };
}

function record(name, ok, detail = '') {
  results.push({ name, ok });
  const tail = detail ? `\n${detail.replace(/^/gm, '    ')}` : '';
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}${ok && detail.length < 200 && detail ? `: ${detail.split('\n')[0]}` : ok ? '' : tail}`);
}

/** The publishable workspace packages (not private): [{ dir, name }]. */
export function publishablePackages(root = repoRoot) {
  const out = [];
  for (const group of ['libs', 'kernels']) {
    for (const dir of readdirSync(join(root, group)).sort()) {
      const file = join(root, group, dir, 'package.json');
      if (!existsSync(file)) continue;
      const pkg = JSON.parse(readFileSync(file, 'utf8'));
      if (!pkg.private) out.push({ dir: `${group}/${dir}`, name: pkg.name });
    }
  }
  return out;
}

/** Snippets of the guide: [{ file, lang, code }] from fenced blocks whose info string has `file=NAME`. */
export function guideSnippets(markdown) {
  const snippets = [];
  for (const m of markdown.matchAll(/^```(\w+) file=(\S+)\n([\s\S]*?)^```$/gm)) snippets.push({ lang: m[1], file: m[2], code: m[3] });
  return snippets;
}

function packAll(packages, dest) {
  const args = ['pack', '--json', '--pack-destination', dest, ...packages.flatMap((p) => ['-w', p.dir])];
  const r = run('npm', args, repoRoot);
  if (!r.ok) return { ok: false, output: r.output };
  const json = JSON.parse(r.output.slice(r.output.indexOf('[')));
  return { ok: true, tarballs: Object.fromEntries(json.map((e) => [e.name, join(dest, e.filename)])) };
}

function consumerPackageJson(tarballs) {
  const dev = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')).devDependencies;
  return {
    name: 'tilekit-consumer',
    version: '1.0.0',
    private: true,
    type: 'module',
    dependencies: Object.fromEntries(Object.entries(tarballs).map(([name, path]) => [name, `file:${path}`])),
    devDependencies: { typescript: dev.typescript, tsx: dev.tsx, '@types/node': dev['@types/node'] },
    allowScripts: allowScripts(tarballs, true),
  };
}

/**
 * npm 11 runs a dependency's install script only when `allowScripts` approves it: by name for a
 * registry package, by its `file:` spec for a tarball. The runtime builds its addon; esbuild
 * (under tsx) checks its binary.
 */
function allowScripts(tarballs, runtime) {
  return { [`file:${tarballs['@tilekit/runtime']}`]: runtime, '@tilekit/runtime': runtime, esbuild: true };
}

const TSCONFIG = {
  compilerOptions: {
    target: 'es2022',
    module: 'nodenext',
    moduleResolution: 'nodenext',
    strict: true,
    noEmit: true,
    skipLibCheck: false,
    types: ['node'],
  },
  include: ['*.ts'],
};

function writeProject(app, tarballs, snippets) {
  mkdirSync(app, { recursive: true });
  writeFileSync(join(app, 'package.json'), `${JSON.stringify(consumerPackageJson(tarballs), null, 2)}\n`);
  writeFileSync(join(app, 'tsconfig.json'), `${JSON.stringify(TSCONFIG, null, 2)}\n`);
  for (const s of snippets) writeFileSync(join(app, s.file), s.code);
}

function checkInstall(app) {
  const r = run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline'], app);
  const warnings = r.output.split('\n').filter((l) => /^npm warn/i.test(l));
  record('npm install of the tarballs', r.ok, r.ok ? `${warnings.length} npm warnings` : r.output);
  if (warnings.length > 0) record('npm install prints no warnings', false, warnings.join('\n'));
  return r.ok;
}

function checkImports(app, packages) {
  for (const { name } of packages) {
    const r = run(
      process.execPath,
      ['-e', `import(${JSON.stringify(name)}).then((m) => console.log(Object.keys(m).length + ' exports'))`],
      app,
    );
    record(`node imports ${name}`, r.ok, r.output);
  }
}

function checkAddon(app) {
  const addon = join(app, 'node_modules', '@tilekit', 'runtime', 'build', 'Release', 'tilekit_runtime.node');
  const r = run(process.execPath, ['-e', "import('@tilekit/runtime').then(({ probe }) => console.log(JSON.stringify(probe())))"], app);
  const probe = r.ok ? JSON.parse(r.output.split('\n').pop()) : undefined;
  record('native addon built by the install script', existsSync(addon) && probe?.addon === true, r.output);
}

/**
 * A project whose allowScripts denies the runtime's install script: it still imports, `probe()`
 * explains in one line, and `npx tilekit-build-native` then builds the addon.
 */
function checkDeniedInstall(work, tarballs) {
  const app = join(work, 'denied');
  const names = ['@tilekit/numeric', '@tilekit/codegen', '@tilekit/runtime'];
  const deps = Object.fromEntries(names.map((n) => [n, `file:${tarballs[n]}`]));
  mkdirSync(app, { recursive: true });
  const pkg = {
    name: 'tilekit-denied',
    version: '1.0.0',
    private: true,
    type: 'module',
    dependencies: deps,
    allowScripts: allowScripts(tarballs, false),
  };
  writeFileSync(join(app, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`);
  const install = run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline'], app);
  record('npm install with the runtime script denied', install.ok, install.output);
  const probe = "import('@tilekit/runtime').then(({ probe }) => { const p = probe(); console.log(p.addon + ' ' + p.reason); })";
  const before = run(process.execPath, ['-e', probe], app);
  const reason = before.output.split('\n');
  record(
    'probe() explains the missing addon in one line',
    before.ok && reason.length === 1 && reason[0].startsWith('false ') && reason[0].includes('tilekit-build-native'),
    before.output,
  );
  const build = run('npx', ['--no-install', 'tilekit-build-native'], app);
  const after = run(process.execPath, ['-e', probe], app);
  record('npx tilekit-build-native builds it afterwards', build.ok && after.output.startsWith('true '), `${build.output}\n${after.output}`);
}

function checkSnippets(app, snippets) {
  const tsx = join(app, 'node_modules', '.bin', 'tsx');
  for (const s of snippets) {
    const r = s.lang === 'ts' ? run(tsx, [s.file], app) : run(process.execPath, [s.file], app);
    record(`${s.lang === 'ts' ? 'tsx' : 'node'} ${s.file}`, r.ok, r.output);
  }
  if (snippets.some((s) => s.lang === 'ts')) {
    const r = run(join(app, 'node_modules', '.bin', 'tsc'), ['-p', '.'], app);
    record('tsc --noEmit over the .ts snippets', r.ok, r.output);
  }
}

function main() {
  const flags = parseFlags();
  if (!flags['skip-build']) {
    const b = run(process.execPath, [join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc'), '-b', 'tsconfig.build.json'], repoRoot);
    record('tsc -b tsconfig.build.json', b.ok, b.output);
    if (!b.ok) return finish(undefined, flags);
  }
  const packages = publishablePackages();
  const snippets = guideSnippets(readFileSync(GUIDE, 'utf8'));
  record(
    `docs/using-tilekit.md has runnable snippets`,
    snippets.length >= 3,
    `${snippets.length}: ${snippets.map((s) => s.file).join(', ')}`,
  );
  const work = mkdtempSync(join(tmpdir(), 'tilekit-consumer-'));
  const packed = packAll(packages, work);
  record(
    `npm pack of ${packages.length} packages`,
    packed.ok && Object.keys(packed.tarballs).length === packages.length,
    packed.output ?? '',
  );
  if (packed.ok) {
    const app = join(work, 'app');
    writeProject(app, packed.tarballs, snippets);
    if (checkInstall(app)) {
      checkImports(app, packages);
      checkAddon(app);
      checkSnippets(app, snippets);
    }
    checkDeniedInstall(work, packed.tarballs);
  }
  finish(work, flags);
}

function finish(work, flags) {
  if (work && !flags.keep) rmSync(work, { recursive: true, force: true });
  else if (work) console.log(`consumer: kept ${work}`);
  const failed = results.filter((r) => !r.ok).length;
  console.log(`consumer: ${results.length - failed} passed, ${failed} failed`);
  process.exit(failed === 0 ? 0 : 1);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
