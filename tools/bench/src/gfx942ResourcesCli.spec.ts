// CI: the committed gfx942 resource table (benchmarks/results/gfx942-resources.md and README.md's block)
// matches a fresh compile of every gfx942 instance by clang-19; a stale copy fails --check with one line;
// bad input is one line and exit 2. Skipped LOUDLY without clang-19. The table's rows: formatGfx942ResourceTable.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findGfx942Clang, formatGfx942ResourceTable, type Gfx942KernelResources } from '@tilekit/kernel-gemm';
import { afterAll, describe, expect, it } from 'vitest';
import { GFX942_RESOURCES_MARKERS } from './gfx942ResourceDocument.ts';

const repoRoot = join(import.meta.dirname, '..', '..', '..');
const cli = join(import.meta.dirname, 'gfx942ResourcesCli.ts');
const run = (...args: string[]) =>
  spawnSync(process.execPath, ['--import', 'tsx', '--conditions=@tilekit/source', cli, ...args], { cwd: repoRoot, encoding: 'utf8' });
const clang = findGfx942Clang();
if (clang === undefined)
  console.warn('\n!!! SKIPPING the gfx942 resource table check: clang-19 not found (set TILEKIT_CLANG). It is NOT being checked. !!!\n');

describe('formatGfx942ResourceTable', () => {
  it('one row per kernel: arch VGPRs = total − AGPRs, spills, scratch, LDS, threads, waves per SIMD', () => {
    const r: Gfx942KernelResources = {
      name: 'k',
      vgprCount: 260,
      agprCount: 144,
      sgprCount: 50,
      vgprSpillCount: 1,
      sgprSpillCount: 2,
      privateSegmentBytes: 8,
      groupSegmentBytes: 24576,
      kernargBytes: 72,
      maxFlatWorkgroupSize: 256,
      wavefrontSize: 64,
      occupancy: 1,
    };
    expect(
      formatGfx942ResourceTable([{ catalog: 'gemm', resources: r }])
        .split('\n')
        .at(-1),
    ).toBe('| gemm | `k` | 116 + 144 = 260 | 50 | 1/2 | 8 | 24576 | 256 | 1 |');
  });
});

describe.runIf(clang !== undefined)('gfx942ResourcesCli', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tilekit-gfx942-resources-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('--check: the committed table and README block match a fresh compile; a stale copy fails with one line', () => {
    const fresh = run('--check');
    expect(fresh.status, fresh.stderr).toBe(0);
    const readme = join(dir, 'README.md');
    writeFileSync(readme, `# copy\n\n${GFX942_RESOURCES_MARKERS.begin}\nstale\n${GFX942_RESOURCES_MARKERS.end}\n`);
    const out = join(dir, 'gfx942-resources.md');
    writeFileSync(out, readFileSync(join(repoRoot, 'benchmarks', 'results', 'gfx942-resources.md'), 'utf8'));
    const stale = run('--check', '--readme', readme, '--out', out);
    expect(stale.status).toBe(1);
    expect(stale.stderr.trim().split('\n').at(-1)).toMatch(
      /the gfx942 resources differ from a fresh compile; run npm run gfx942:resources/,
    );
  }, 600_000);

  it('bad input is one line on stderr and exit 2, before compiling', () => {
    const both = run('--check', '--write');
    expect(both.status).toBe(2);
    expect(both.stderr).toMatch(/^error: give --write or --check, not both/);
    const plain = join(dir, 'plain.md');
    writeFileSync(plain, '# none\n');
    const missing = run('--check', '--readme', plain);
    expect(missing.status).toBe(2);
    expect(missing.stderr.trim().split('\n')).toHaveLength(1);
    expect(missing.stderr).toContain('must hold the markers');
  });
});
