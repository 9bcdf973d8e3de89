// Flat ESLint config. The layering of docs/architecture.md is enforced here through nx project tags:
// a package may import only from packages whose layer is below (or equal to) its own.
import js from '@eslint/js';
import nx from '@nx/eslint-plugin';
import tseslint from 'typescript-eslint';

const below = (...layers) => layers.map((l) => `layer:${l}`);

/** Which layers each layer may depend on (itself included). */
export const layerRules = [
  { sourceTag: 'layer:numeric', onlyDependOnLibsWithTags: below('numeric') },
  { sourceTag: 'layer:codegen', onlyDependOnLibsWithTags: below('numeric', 'codegen') },
  { sourceTag: 'layer:layout', onlyDependOnLibsWithTags: below('numeric', 'codegen', 'layout') },
  { sourceTag: 'layer:tile', onlyDependOnLibsWithTags: below('numeric', 'codegen', 'layout', 'tile') },
  { sourceTag: 'layer:ops', onlyDependOnLibsWithTags: below('numeric', 'codegen', 'layout', 'tile', 'ops') },
  // host and runtime sit beside the pure chain: host needs only dtypes, runtime only argument layouts.
  { sourceTag: 'layer:host', onlyDependOnLibsWithTags: below('numeric', 'host') },
  { sourceTag: 'layer:runtime', onlyDependOnLibsWithTags: below('numeric', 'codegen', 'runtime') },
  // launch: the runtime side that several operators share (buffer checks, tensor maps, loaded kernels).
  {
    sourceTag: 'layer:launch',
    onlyDependOnLibsWithTags: below('numeric', 'codegen', 'layout', 'tile', 'ops', 'host', 'runtime', 'launch'),
  },
  // An operator never imports another operator: what two of them share moves down into a library.
  {
    sourceTag: 'layer:kernels',
    onlyDependOnLibsWithTags: below('numeric', 'codegen', 'layout', 'tile', 'ops', 'host', 'runtime', 'launch'),
  },
  {
    sourceTag: 'layer:examples',
    onlyDependOnLibsWithTags: below('numeric', 'codegen', 'layout', 'tile', 'ops', 'host', 'runtime', 'launch', 'kernels', 'examples'),
  },
  { sourceTag: 'layer:tools', onlyDependOnLibsWithTags: ['*'] },
  // Pure libraries stay free of the addon and node-only packages through the layer rules above
  // (checked on every direct import, so transitively too) and the node built-in ban below. A
  // separate transitive platform rule would also count the test harness that GPU specs import.
];

const nodeBuiltinBan = {
  patterns: [{ group: ['node:*'], message: 'Pure libraries may not import node built-ins (docs/architecture.md: pure TS layers).' }],
  paths: ['fs', 'path', 'os', 'child_process', 'crypto', 'url', 'util', 'worker_threads', 'module'].map((name) => ({
    name,
    message: 'Pure libraries may not import node built-ins (docs/architecture.md: pure TS layers).',
  })),
};

/** Packages tagged platform:pure; kept in step with their package.json tags by a test. */
export const purePackageGlobs = ['libs/numeric/**', 'libs/codegen/**', 'libs/layout/**', 'libs/tile/**', 'libs/gemm/**', 'libs/fmha/**'];

export default [
  { ignores: ['**/node_modules/**', '**/dist/**', '**/build/**', '.nx/**', 'tmp/**', '**/__fixtures__/**', '.device/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.mjs', '**/*.js'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    // Package sources only: root config files legitimately import the shared vitest setup by path.
    files: ['{libs,kernels,examples,tools}/*/src/**/*.ts'],
    plugins: { '@nx': nx },
    rules: {
      '@nx/enforce-module-boundaries': [
        'error',
        {
          enforceBuildableLibDependency: false,
          allow: [],
          depConstraints: layerRules,
        },
      ],
    },
  },
  {
    // GPU specs are test harnesses run on the GPU machine: any layer may use the runtime and host
    // utilities there to launch what it emits and compare with its CPU results.
    files: ['{libs,kernels,examples,tools}/*/src/**/*.gpu.spec.ts'],
    plugins: { '@nx': nx },
    rules: {
      '@nx/enforce-module-boundaries': [
        'error',
        {
          enforceBuildableLibDependency: false,
          allow: ['@tilekit/runtime', '@tilekit/runtime/testing', '@tilekit/host'],
          depConstraints: layerRules,
        },
      ],
    },
  },
  {
    files: purePackageGlobs.map((g) => `${g}/*.ts`).concat(purePackageGlobs.map((g) => g.replace('/**', '/src/**/*.ts'))),
    ignores: ['**/*.spec.ts', '**/testing/**'],
    rules: { 'no-restricted-imports': ['error', nodeBuiltinBan] },
  },
];
