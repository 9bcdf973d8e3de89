// Comments and docs cite only what a reader of the repository can open: its own files, or public papers and
// specifications by name (issue 18, item 7). This scans the tracked sources and docs for references to notes
// that live outside the repository (research digests, seeds, design notes next to the checkout) and lists
// every file:line that has one.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { workspaceRoot } from './workspaceProjects.ts';

const SCANNED_DIRS = ['libs', 'kernels', 'tools', 'examples', 'docs'];
const SCANNED_EXTENSIONS = /\.(?:ts|mts|mjs|py|md)$/;
const SELF = 'tools/workspace/src/openableCitations.spec.ts';

/** Each pattern names something outside the repository; none occurs in ordinary prose or code. */
const FORBIDDEN: readonly { readonly pattern: RegExp; readonly why: string }[] = [
  { pattern: /digest(?:'s)? §/, why: 'a section of a research digest that is not in the repository' },
  { pattern: /shared\/(?:research|seeds|design)\b/, why: 'a note outside the repository' },
  { pattern: /\.\.\/shared\//, why: 'a path that leaves the repository' },
  { pattern: /\bHOPPER\.md\b/, why: 'a note outside the repository' },
];

function trackedFiles(): string[] {
  const out = execFileSync('git', ['ls-files', '-z', '--', ...SCANNED_DIRS], { cwd: workspaceRoot, encoding: 'utf8' });
  return out
    .split('\0')
    .filter((p) => SCANNED_EXTENSIONS.test(p) && p !== SELF && !/(?:^|\/)(?:node_modules|dist)\//.test(p))
    .filter((p) => existsSync(join(workspaceRoot, p))); // a tracked file deleted in the working tree has nothing to scan
}

describe('citations a reader can open (issue 18, item 7)', () => {
  it('no tracked source or doc cites a research digest, seed or design note outside the repository', () => {
    const files = trackedFiles();
    expect(files.length).toBeGreaterThan(100);
    const hits: string[] = [];
    for (const file of files) {
      readFileSync(join(workspaceRoot, file), 'utf8')
        .split('\n')
        .forEach((line, i) => {
          for (const { pattern, why } of FORBIDDEN) if (pattern.test(line)) hits.push(`${file}:${i + 1}: ${why}: ${line.trim()}`);
        });
    }
    expect(hits, 'cite the public paper or specification by name, or a file of this repository, instead').toEqual([]);
  });
});
