import { defineConfig } from 'vitest/config';

// Every package with a vitest.config.ts is a project; `npm run test:unit` runs them all in one process tree.
export default defineConfig({
  test: {
    projects: ['libs/*/vitest.config.ts', 'kernels/*/vitest.config.ts', 'examples/*/vitest.config.ts', 'tools/*/vitest.config.ts'],
    reporters: process.env['CI'] ? ['default'] : ['default'],
  },
});
