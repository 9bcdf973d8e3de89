import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CACHE_CLI_USAGE, formatBytes, parseCacheCliArgs, runCacheCli } from './cacheCli.ts';
import { KernelCache } from './kernelCache.ts';
import { stageCacheEntry, testCacheKey } from './testing/kernelCacheEntries.ts';

const packageDir = dirname(dirname(fileURLToPath(import.meta.url)));
const repoRoot = dirname(dirname(packageDir));
let root: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'tilekit-cache-cli-'));
  const cache = new KernelCache(root, { enabled: true, maxBytes: Infinity });
  for (const n of [1, 2, 3]) {
    const key = testCacheKey(n);
    await cache.publish(key, await stageCacheEntry(cache, key, new Uint8Array(4096)));
  }
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** Runs the CLI in-process, capturing its output. */
async function cli(argv: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<{ status: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const status = await runCacheCli(argv, { stdout: (t) => (out += t), stderr: (t) => (err += t), env, now: Date.now() });
  return { status, out, err };
}

/** Runs bin/tilekit-cache.mjs the way the workspace does: tsx with the source condition. */
function spawnCli(argv: readonly string[]): Promise<{ status: number | null; out: string; err: string }> {
  const tsx = join(repoRoot, 'node_modules', '.bin', 'tsx');
  const script = join(packageDir, 'bin', 'tilekit-cache.mjs');
  return new Promise((resolve, reject) => {
    const child = spawn(tsx, ['--conditions=@tilekit/source', script, ...argv], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, out, err }));
  });
}

const BAD_ARGS: readonly (readonly string[])[] = [
  ['clean'],
  ['info', 'prune'],
  ['--verbose'],
  ['prune', '--max-mb'],
  ['prune', '--max-mb', '-3'],
  ['prune', '--max-mb=abc'],
  ['prune', '--older-than-days', 'soon'],
  ['prune', '--dir', '--dry-run'],
  ['prune', '--dir='],
  ['prune', '--dir', 'a', '--dir', 'b'],
  ['info', '--dry-run'],
  ['info', '--max-mb', '5'],
  ['prune', '--dry-run=yes'],
];

describe('tilekit-cache arguments', () => {
  it('parses commands and options', () => {
    expect(parseCacheCliArgs([])).toEqual({ command: 'info', dryRun: false });
    expect(parseCacheCliArgs(['prune', '--max-mb', '1.5', '--older-than-days=30', '--dry-run', '--dir', '/c'])).toEqual({
      command: 'prune',
      dir: '/c',
      maxMb: 1.5,
      olderThanDays: 30,
      dryRun: true,
    });
    expect(parseCacheCliArgs(['clean', '--bogus', '-h']).command).toBe('help');
  });

  it('answers every bad command line with exit 2 and one stderr line', async () => {
    for (const argv of BAD_ARGS) {
      const { status, out, err } = await cli(argv);
      expect({ argv, status, out }).toEqual({ argv, status: 2, out: '' });
      expect(err).toMatch(/^tilekit-cache: [^\n]+\n$/);
    }
  });

  it('never throws and exits 0 or 2 on arbitrary argument lists', async () => {
    const token = fc.oneof(fc.constantFrom('info', 'prune', '--dry-run', '--max-mb', '--older-than-days', '1', '-2', 'x'), fc.string());
    await fc.assert(
      fc.asyncProperty(fc.array(token, { maxLength: 6 }), async (argv) => {
        const { status, err } = await cli(argv, { TILEKIT_CACHE_DIR: join(root, 'absent') });
        expect([0, 2]).toContain(status);
        if (status === 2) expect(err).toMatch(/^tilekit-cache: [^\n]+\n$/);
      }),
    );
  });

  it('reports a bad environment variable as a usage error', async () => {
    const { status, err } = await cli(['info', '--dir', root], { TILEKIT_CACHE_MAX_MB: 'lots' });
    expect(status).toBe(2);
    expect(err).toBe('tilekit-cache: TILEKIT_CACHE_MAX_MB: must be a non-negative number of MiB (0: no cap) (got "lots")\n');
  });
});

describe('tilekit-cache output', () => {
  it('prints a summary for info and prune --dry-run without removing anything', async () => {
    const info = await cli(['info', '--dir', root]);
    expect(info.status).toBe(0);
    expect(info.out).toContain(`tilekit kernel cache: ${root}`);
    expect(info.out).toMatch(/holds\s+3 items .*\(3 entries, 0 failed, 0 temporary\)/);
    const dry = await cli(['prune', '--dir', root, '--max-mb', '0', '--dry-run']);
    expect(dry.out).toMatch(/would remove 3 items/);
    expect((await cli(['info', '--dir', root])).out).toMatch(/holds\s+3 items/);
    expect(dry.out.split('\n').length).toBeLessThan(12);
  });

  it('formats sizes in binary units', () => {
    expect([0, 1023, 1536, 5 * 1024 ** 3].map(formatBytes)).toEqual(['0 B', '1023 B', '1.5 KiB', '5.0 GiB']);
  });
});

describe('bin/tilekit-cache.mjs', () => {
  it('prints one line and exits 2 for a bad flag, without a stack', async () => {
    const { status, out, err } = await spawnCli(['prune', '--max-mb', 'many']);
    expect(status).toBe(2);
    expect(out).toBe('');
    expect(err).toBe('tilekit-cache: --max-mb must be a number >= 0 (got "many")\n');
  });

  it('prints usage for --help and exits 0', async () => {
    const { status, out } = await spawnCli(['--help']);
    expect(status).toBe(0);
    expect(out).toBe(`${CACHE_CLI_USAGE}\n`);
  });

  it('prunes a cache directory', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tilekit-cache-cli-prune-'));
    const cache = new KernelCache(dir, { enabled: true, maxBytes: Infinity });
    const key = testCacheKey(9);
    await cache.publish(key, await stageCacheEntry(cache, key, new Uint8Array(10)));
    const { status, out } = await spawnCli(['prune', '--dir', dir, '--max-mb', '0']);
    expect(status).toBe(0);
    expect(out).toMatch(/removed 1 items/);
    expect(await cache.lookup(key)).toBeUndefined();
    await rm(dir, { recursive: true, force: true });
  });
});
