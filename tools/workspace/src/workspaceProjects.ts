import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** The repository root, found from this file's location (tools/workspace/src). */
export const workspaceRoot = resolve(import.meta.dirname, '../../..');

export interface WorkspaceProject {
  readonly name: string;
  readonly dir: string;
  readonly tags: readonly string[];
  readonly dependencies: readonly string[];
}

const packageFolders = ['libs', 'kernels', 'examples', 'tools'];

/** Every workspace package with its nx tags, read from the package.json files npm workspaces name. */
export function readWorkspaceProjects(): WorkspaceProject[] {
  const projects: WorkspaceProject[] = [];
  for (const folder of packageFolders) {
    const base = join(workspaceRoot, folder);
    if (!existsSync(base)) continue;
    for (const entry of readdirSync(base, { withFileTypes: true })) {
      const manifestPath = join(base, entry.name, 'package.json');
      if (!entry.isDirectory() || !existsSync(manifestPath)) continue;
      const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as {
        name: string;
        dependencies?: Record<string, string>;
        nx?: { tags?: string[] };
      };
      projects.push({
        name: manifest.name,
        dir: `${folder}/${entry.name}`,
        tags: manifest.nx?.tags ?? [],
        dependencies: Object.keys(manifest.dependencies ?? {}),
      });
    }
  }
  return projects;
}

/**
 * The nx module-boundary rule reads a cached project graph and silently skips itself without one,
 * so anything that lints must make sure the graph exists first.
 */
export function ensureProjectGraph(): void {
  execFileSync(join(workspaceRoot, 'node_modules/.bin/nx'), ['show', 'projects'], {
    cwd: workspaceRoot,
    env: { ...process.env, NX_DAEMON: 'false' },
    stdio: 'ignore',
  });
}
