// One vitest project definition shared by every package: tests live beside the code as *.spec.ts,
// sources resolve through the "@tilekit/source" export condition (no build step), and GPU-only specs
// (*.gpu.spec.ts) are left to `npm run test:gpu`.
import { fileURLToPath } from 'node:url';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineProject } from 'vitest/config';

const sourceConditions = ['@tilekit/source'];
const setupFile = fileURLToPath(new URL('./vitest.setup.ts', import.meta.url));

export function tilekitProject(projectDir: string) {
  return defineProject({
    resolve: { conditions: sourceConditions },
    ssr: { resolve: { conditions: sourceConditions, externalConditions: sourceConditions } },
    test: {
      name: (JSON.parse(readFileSync(join(projectDir, 'package.json'), 'utf8')) as { name: string }).name,
      root: projectDir,
      include: ['src/**/*.spec.ts'],
      exclude: ['**/*.gpu.spec.ts', '**/node_modules/**'],
      setupFiles: [setupFile],
      testTimeout: 120_000,
    },
  });
}
