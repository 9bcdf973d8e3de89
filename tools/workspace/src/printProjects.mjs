// Lists every package of the nx project graph with its tags and workspace dependencies:
//   npm run projects
// It takes no arguments: any is a usage error (one line on stderr, exit 2).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

if (process.argv.length > 2) {
  console.error(
    `error: printProjects takes no arguments (got ${JSON.stringify(process.argv.slice(2).join(' '))}; usage: npm run projects)`,
  );
  process.exit(2);
}

const dir = mkdtempSync(join(tmpdir(), 'tilekit-graph-'));
try {
  const file = join(dir, 'graph.json');
  execFileSync('npx', ['nx', 'graph', `--file=${file}`], { stdio: 'ignore', env: { ...process.env, NX_DAEMON: 'false' } });
  const { graph } = JSON.parse(readFileSync(file, 'utf8'));
  const rows = Object.values(graph.nodes)
    .map((node) => [
      node.name,
      node.data.root,
      (node.data.tags ?? []).join(' '),
      (graph.dependencies[node.name] ?? [])
        .map((d) => d.target)
        .filter((t) => t.startsWith('@tilekit/'))
        .join(' '),
    ])
    .sort((a, b) => a[1].localeCompare(b[1]));
  const header = ['project', 'root', 'tags', 'depends on'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  for (const row of [header, ...rows])
    console.log(
      row
        .map((cell, i) => cell.padEnd(widths[i]))
        .join('  ')
        .trimEnd(),
    );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
