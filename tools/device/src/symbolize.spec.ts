// The symbolizer on a tiny split build made here: two entries sharing a module that throws, laid out
// like .device/ (gpu-tests/, bench-*, chunks/) with the maps in a sibling .device-maps/. A real
// stack trace of the bundle must come back as the .ts lines, from the paths of this machine and
// from the absolute paths a GPU machine prints.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const symbolizeCli = join(import.meta.dirname, '..', 'symbolize.mjs');

function runNode(args: readonly string[], input?: string) {
  return spawnSync(process.execPath, args, { encoding: 'utf8', ...(input === undefined ? {} : { input }) });
}

const SOURCES: Record<string, string> = {
  'src/shared.ts': [
    'export function fail(what: string): never {',
    '  const message = `failed: ${what}`;',
    '  throw new Error(message);',
    '}',
    '',
  ].join('\n'),
  'src/a.ts': ["import { fail } from './shared.ts';", '', 'export function runA(): void {', "  fail('a');", '}', 'runA();', ''].join('\n'),
  'src/b.ts': ["import { fail } from './shared.ts';", '', "fail('b');", ''].join('\n'),
};

/** Builds SOURCES under `dir` like pack.mjs does; maps go to the sibling folder of the same depth, so esbuild's relative sources stay right. */
async function tinyPack(dir: string): Promise<void> {
  for (const [path, text] of Object.entries(SOURCES)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  const result = await build({
    absWorkingDir: dir,
    entryPoints: { 'gpu-tests/a': join(dir, 'src/a.ts'), 'bench-b': join(dir, 'src/b.ts') },
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    outdir: join(dir, '.device'),
    outExtension: { '.js': '.mjs' },
    chunkNames: 'chunks/[name]-[hash]',
    sourcemap: 'external',
    sourcesContent: false,
    write: false,
    logLevel: 'silent',
  });
  for (const file of result.outputFiles) {
    const target = file.path.endsWith('.map') ? join(dir, '.device-maps', relative(join(dir, '.device'), file.path)) : file.path;
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, file.contents);
  }
}

describe('symbolize.mjs on a tiny split build', () => {
  let dir = '';
  let stderr = '';

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tilekit-symbolize-'));
    await tinyPack(dir);
    const run = runNode([join(dir, '.device', 'gpu-tests', 'a.mjs')]);
    expect(run.status).toBe(1);
    stderr = run.stderr;
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('the bundle really throws from a chunk (the case worth mapping)', () => {
    expect(stderr).toMatch(/\.device\/chunks\/chunk-[A-Z0-9]+\.mjs:\d+:\d+/);
    expect(stderr).toMatch(/\.device\/gpu-tests\/a\.mjs:\d+:\d+/);
  });

  it('maps the chunk and entry frames, and the bare :line above the excerpt, back to the .ts lines', () => {
    const run = runNode([symbolizeCli, '--maps', join(dir, '.device-maps'), '-'], stderr);
    expect(run.status).toBe(0);
    expect(run.stdout).toContain(`at fail (${join(dir, 'src/shared.ts')}:3:9)`);
    expect(run.stdout).toContain(`at runA (${join(dir, 'src/a.ts')}:4:3)`);
    expect(run.stdout).toContain(`${join(dir, 'src/shared.ts')}:3\n`);
    expect(run.stdout).not.toContain('.mjs:');
    expect(run.stderr).toMatch(/symbolize: 4 frames mapped/);
  });

  it('finds the map by the tail of the path: the absolute paths of a GPU machine map the same', () => {
    const local = `file://${join(dir, '.device')}`;
    const gpuMachine = stderr
      .replaceAll(`${local}/chunks/`, '/home/gpu/run/.device/chunks/')
      .replaceAll(`${local}/gpu-tests/`, 'file:///srv/job-17/gpu-tests/');
    expect(gpuMachine).not.toContain(dir);
    const run = runNode([symbolizeCli, '--maps', join(dir, '.device-maps'), '-'], gpuMachine);
    expect(run.stdout).toContain(`at fail (${join(dir, 'src/shared.ts')}:3:9)`);
    expect(run.stdout).toContain(`at runA (${join(dir, 'src/a.ts')}:4:3)`);
  });

  it('leaves frames without a map as they are, and reads a log file', () => {
    const log = join(dir, 'other.log');
    writeFileSync(log, '    at x (/elsewhere/other.mjs:1:1)\n    at node:internal/main:7:3\n');
    const run = runNode([symbolizeCli, '--maps', join(dir, '.device-maps'), log]);
    expect(run.status).toBe(0);
    expect(run.stdout).toBe('    at x (/elsewhere/other.mjs:1:1)\n    at node:internal/main:7:3\n');
    expect(run.stderr).toContain('0 frames mapped to sources, 1 without a map');
  });
});

describe('symbolize.mjs command line', () => {
  const cases: [string, string[]][] = [
    ['no log file', []],
    ['two log files', ['a.log', 'b.log']],
    ['an unknown flag', ['--nope', 'a.log']],
    ['a missing log file', ['--maps', tmpdir(), join(tmpdir(), 'tilekit-no-such.log')]],
    ['a missing maps folder', ['--maps', join(tmpdir(), 'tilekit-no-such-maps'), 'a.log']],
  ];
  it.each(cases)('%s: one line on stderr, exit 2, no stack', (_, args) => {
    const run = runNode([symbolizeCli, ...args]);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/^symbolize: [^\n]+\n$/);
    expect(run.stdout).toBe('');
  });

  it('--help prints the usage and exits 0', () => {
    const run = runNode([symbolizeCli, '--help']);
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^usage: node tools\/device\/symbolize\.mjs/);
  });
});
