#!/usr/bin/env node
// Builds the tilekit native addon with node-gyp, offline, against the Node headers installed
// beside the running node (or $TILEKIT_NODEDIR / npm's nodedir). Used by the package's
// `install` script and by the nx target `build-native`.
//
//   node libs/runtime/scripts/build-native.mjs        build (or rebuild) build/Release/tilekit_runtime.node
//   npx tilekit-build-native                           the same from a project that installed @tilekit/runtime
//   TILEKIT_SKIP_NATIVE=1 npm ci                       skip the build (compilers still work, devices do not)
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const packageDir = dirname(dirname(fileURLToPath(import.meta.url)));
const addonPath = join(packageDir, 'build', 'Release', 'tilekit_runtime.node');
const require = createRequire(join(packageDir, 'package.json'));

function fail(summary, details) {
  const lines = [
    '',
    '================================================================================',
    `tilekit: building the native addon (@tilekit/runtime) FAILED: ${summary}`,
    ...details.map((d) => `  ${d}`),
    '',
    '  The addon is needed to run kernels on a GPU; generating and compiling kernels (nvcc)',
    '  work without it. Requirements: python3, make, a C++17 g++ and the Node headers',
    '  (<prefix>/include/node/node_api.h). No CUDA toolkit or driver is needed to build.',
    '  Retry:  npx tilekit-build-native   (in the tilekit workspace: node libs/runtime/scripts/build-native.mjs)',
    '  Skip:   TILEKIT_SKIP_NATIVE=1 npm ci',
    '================================================================================',
    '',
  ];
  console.error(lines.join('\n'));
  process.exit(1);
}

function hasHeaders(dir) {
  return existsSync(join(dir, 'include', 'node', 'node_api.h'));
}

function findNodeDir() {
  const candidates = [
    ['TILEKIT_NODEDIR', process.env['TILEKIT_NODEDIR']],
    ['npm config nodedir', process.env['npm_config_nodedir']],
    ['npm_package_config_node_gyp_nodedir', process.env['npm_package_config_node_gyp_nodedir']],
    ['the running node', dirname(dirname(process.execPath))],
  ];
  for (const [source, dir] of candidates) {
    if (dir && hasHeaders(dir)) return { dir, source };
  }
  return undefined;
}

function findNodeGyp() {
  try {
    return require.resolve('node-gyp/bin/node-gyp.js');
  } catch {
    // fall through to npm's bundled copy
  }
  const bundled = process.env['npm_config_node_gyp'];
  if (bundled && existsSync(bundled)) return bundled;
  // npm's own copy beside the running node (npx and plain node do not always set npm_config_node_gyp).
  const npmCopy = join(dirname(dirname(process.execPath)), 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
  return existsSync(npmCopy) ? npmCopy : undefined;
}

if (process.env['TILEKIT_SKIP_NATIVE']) {
  console.warn('tilekit: TILEKIT_SKIP_NATIVE is set: the native addon was NOT built (devices unavailable).');
  process.exit(0);
}

const nodeDir = findNodeDir();
if (!nodeDir) {
  fail('no Node headers found', [
    `looked for include/node/node_api.h under $TILEKIT_NODEDIR, npm's nodedir and ${dirname(dirname(process.execPath))}`,
    'install the headers (e.g. the distribution package that ships include/node) or set TILEKIT_NODEDIR',
  ]);
}
const nodeGyp = findNodeGyp();
if (!nodeGyp) fail('node-gyp not found', ['install the workspace devDependencies (npm ci) or run from npm']);

const args = [nodeGyp, 'rebuild', `--nodedir=${nodeDir.dir}`, '--jobs=max'];
console.log(`tilekit: building the native addon: node ${args.map((a) => (a === nodeGyp ? 'node-gyp' : a)).join(' ')}`);
console.log(`tilekit: Node headers from ${nodeDir.source} (${nodeDir.dir})`);
const build = spawnSync(process.execPath, args, { cwd: packageDir, stdio: 'inherit' });
if (build.error) fail(`could not run node-gyp: ${build.error.message}`, []);
if (build.status !== 0) fail(`node-gyp exited with status ${build.status}`, ['see the compiler output above']);
if (!existsSync(addonPath)) fail(`node-gyp succeeded but ${addonPath} is missing`, []);

// Load the fresh binary in a child process: a broken binary must not crash the installer, and a
// load failure (missing symbol, wrong ABI) is best reported here rather than at first use.
const check = spawnSync(
  process.execPath,
  ['-e', `const a = require(${JSON.stringify(addonPath)}); console.log(JSON.stringify(a.probe()));`],
  { encoding: 'utf8' },
);
if (check.status !== 0) {
  fail('the built addon does not load', [(check.stderr || check.stdout || '').trim()]);
}
console.log(`tilekit: built ${addonPath}`);
console.log(`tilekit: probe ${check.stdout.trim()}`);
