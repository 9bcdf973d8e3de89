// README.md's benchmark tables: regenerated from the committed benchmarks/results/*.json they must
// equal the README's block (issue 16: "a test regenerates it and compares"); the formatter on a
// small synthetic result; the markers; the command line (--check, --write) on a copy of the README.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ArgumentError } from '@tilekit/numeric';
import { afterAll, describe, expect, it } from 'vitest';
import type { BenchSuiteResult } from './benchResult.ts';
import { BENCH_TABLE_BEGIN, BENCH_TABLE_END, extractMarkedBlock, replaceMarkedBlock } from './readmeBlock.ts';
import { formatProvenanceLine, shortCommit } from './readmeProvenance.ts';
import { inReadmeOrder, readBenchResults } from './readmeResults.ts';
import { bestTorchBaseline, formatReadmeBenchTable, formatSpread, formatSuiteSection, formatSuiteTable } from './readmeTable.ts';

const repoRoot = join(import.meta.dirname, '..', '..', '..');
const resultsDir = join(repoRoot, 'benchmarks', 'results');
const readmePath = join(repoRoot, 'README.md');

/** A result in the issue-16 format: repetitions, a baseline that errored, an invalid case, provenance. */
const synthetic = {
  suite: 'fmha-fwd',
  device: 'NVIDIA H100 80GB HBM3',
  date: '2026-11-26',
  commit: '0123456789abcdef0123456789abcdef01234567+uncommitted',
  provenance: { torch: '2.9.1', cuda: '12.8', cudnn: 91002, driver: '580.159.04', smClockMHz: 1755, smClockMaxMHz: 1980, powerLimitW: 700 },
  inputs: { generator: 'normal fp32 → dtype', seed: 7 },
  cases: [
    {
      name: 'b2_h16_s8192_d128_fp16',
      params: { b: 2, h: 16, s: 8192, d: 128 },
      ours: { ms: 1.0, msMin: 0.99, msMax: 1.02, tflops: 550.0, instance: 'fmha_fwd_d128' },
      baselines: {
        'torch-flash': { ms: 1.8, tflops: 305.0 },
        'torch-cudnn': { ms: 0.99, msMin: 0.98, msMax: 1.0, tflops: 555.0 },
        'torch-efficient': { error: 'No available kernel. Aborting execution.' },
        'ours-dense': { ms: 0.5, tflops: 1100.0 },
      },
      valid: true,
    },
    {
      name: 'b1_h8_s4096_d64_fp16',
      params: { b: 1, h: 8, s: 4096, d: 64 },
      ours: { ms: 0.2, msMin: 0.18, msMax: 0.25, tflops: 42.0, instance: 'fmha_fwd_d64' },
      baselines: { 'torch-flash': { ms: 0.1, tflops: 84.0, valid: false } },
      valid: false,
      noisy: true,
    },
    {
      name: 'b1_h8_s4096_d64_causal_fp16',
      params: { b: 1, h: 8, s: 4096, d: 64, causal: true },
      ours: { ms: 0.1, tflops: 8.4, instance: 'fmha_fwd_d64' },
      baselines: { 'torch-flash': { error: 'out of memory' } },
      valid: true,
    },
  ],
} as unknown as BenchSuiteResult;

/** The same suite as written before issue 16: no repetitions, no provenance. */
const legacy: BenchSuiteResult = {
  suite: 'permute',
  device: 'NVIDIA H200',
  date: '2026-11-22',
  commit: '85ccf3d6aa1b2c3d4e5f60718293a4b5c6d7e8f9',
  cases: [
    {
      name: 'bhsd2bshd_fp16',
      params: {},
      ours: { ms: 0.5, gbps: 4040, instance: 'permute_bhsd2bshd' },
      baselines: { 'torch-contiguous': { ms: 1.4, gbps: 1452 }, 'torch-copy': { ms: 0.49, gbps: 4127 } },
      valid: true,
    },
  ],
};

const rowOf = (table: string, name: string): string[] =>
  table
    .split('\n')
    .find((l) => l.startsWith(`| ${name} |`))!
    .split('|')
    .slice(1, -1)
    .map((cell) => cell.trim());

describe('README benchmark block', () => {
  it('equals the block regenerated from the committed benchmarks/results/*.json (npm run bench:readme -- --write)', () => {
    const block = formatReadmeBenchTable(readBenchResults(resultsDir));
    const readme = readFileSync(readmePath, 'utf8');
    expect(readme).toContain(`${BENCH_TABLE_BEGIN}\n${block}${BENCH_TABLE_END}`);
    expect(extractMarkedBlock(readme)).toBe(block);
  });

  it('shows every committed suite once, and links only to reports that exist', () => {
    const results = readBenchResults(resultsDir);
    const block = formatReadmeBenchTable(results);
    for (const r of results) expect(block.split('\n').filter((l) => l === `### ${r.suite}`)).toHaveLength(1);
    const links = [...block.matchAll(/\]\((benchmarks\/results\/[^)]+)\)/g)].map((m) => m[1]!);
    expect(links).toHaveLength(2 * results.length);
    for (const link of links) expect(existsSync(join(repoRoot, link)), link).toBe(true);
  });
});

describe('formatSuiteTable on a synthetic result', () => {
  const table = formatSuiteTable(synthetic);

  it('compares with the fastest torch baseline that ran, skipping errors and our own references', () => {
    expect(table.split('\n')[0]).toBe(
      '| case | ours TFLOP/s | best torch TFLOP/s | best torch | ours / best torch | ours spread | torch spread | valid |',
    );
    expect(rowOf(table, 'b2_h16_s8192_d128_fp16')).toEqual([
      'b2_h16_s8192_d128_fp16',
      '550',
      '555',
      'torch-cudnn',
      '0.99×',
      '0.990–1.02 ms (3.0%)',
      '0.980–1.00 ms (2.0%)',
      'yes',
    ]);
  });

  it('never shows an invalid case as a ratio; marks its noisy spread and a baseline that failed its own validation', () => {
    expect(rowOf(table, 'b1_h8_s4096_d64_fp16')).toEqual([
      'b1_h8_s4096_d64_fp16',
      '42.0',
      '84.0',
      'torch-flash (invalid)',
      'INVALID',
      '0.180–0.250 ms (**35.0%**)',
      '–',
      '**no**',
    ]);
  });

  it('leaves the baseline cells empty when every torch baseline errored', () => {
    expect(rowOf(table, 'b1_h8_s4096_d64_causal_fp16')).toEqual(['b1_h8_s4096_d64_causal_fp16', '8.40', '–', '–', '–', '–', '–', 'yes']);
  });

  it('uses GB/s and drops the spread columns for a suite without repetitions', () => {
    const legacyTable = formatSuiteTable(legacy);
    expect(legacyTable.split('\n')[0]).toBe('| case | ours GB/s | best torch GB/s | best torch | ours / best torch | valid |');
    expect(rowOf(legacyTable, 'bhsd2bshd_fp16')).toEqual(['bhsd2bshd_fp16', '4040', '4127', 'torch-copy', '0.98×', 'yes']);
  });

  it('bestTorchBaseline: undefined when no torch baseline ran', () => {
    expect(bestTorchBaseline(synthetic.cases[2]!, 'tflops')).toBeUndefined();
    expect(bestTorchBaseline(synthetic.cases[0]!, 'tflops')?.name).toBe('torch-cudnn');
  });

  it('formatSpread: a dash without a recorded spread, bold above 5%', () => {
    expect(formatSpread(1, undefined)).toBe('–');
    expect(formatSpread(1, { min: 0.97, max: 1.03 })).toBe('0.970–1.03 ms (**6.0%**)');
    expect(formatSpread(1, { min: 0.99, max: 1.01 }, true)).toBe('0.990–1.01 ms (**2.0%**)');
  });
});

describe('suite section: provenance and summary', () => {
  it('names device, date, short commit, versions, clocks, power and inputs when recorded', () => {
    expect(formatProvenanceLine(synthetic)).toBe(
      'NVIDIA H100 80GB HBM3 · 2026-11-26 · commit `0123456+uncommitted` · torch 2.9.1, CUDA ' +
        '12.8, cuDNN 91002 · driver 580.159.04, SM clock 1755 MHz (max 1980), power limit 700 W ' +
        '· inputs: normal fp32 → dtype, seed 7',
    );
  });

  it('shows only what a result before provenance records', () => {
    expect(formatProvenanceLine(legacy)).toBe('NVIDIA H200 · 2026-11-22 · commit `85ccf3d`');
    expect(
      formatProvenanceLine({ ...legacy, commit: 'unknown', provenance: { torch: '', smClockMHz: 'fast' } } as unknown as BenchSuiteResult),
    ).toBe('NVIDIA H200 · 2026-11-22 · commit `unknown`');
    expect(shortCommit('85ccf3d6aa1b')).toBe('85ccf3d');
  });

  it('counts valid cases and errored baselines, and links the full table and chart', () => {
    const section = formatSuiteSection(synthetic).split('\n\n');
    expect(section[0]).toBe('### fmha-fwd');
    expect(section[2]).toBe(
      '3 cases, 2 valid; 2 baseline runs could not run (their errors are in the full table) · ' +
        'every baseline: [fmha-fwd.md](benchmarks/results/fmha-fwd.md) · chart: ' +
        '[fmha-fwd.svg](benchmarks/results/fmha-fwd.svg)',
    );
    expect(formatSuiteSection(legacy).split('\n\n')[2]).toMatch(
      /^1 cases, 1 valid; a single run per case \(no min–max over repetitions recorded\) · /,
    );
  });

  it('orders suites as the README does and refuses none or a suite twice', () => {
    expect(inReadmeOrder([synthetic, { ...legacy, suite: 'zeta' }, legacy]).map((r) => r.suite)).toEqual(['permute', 'fmha-fwd', 'zeta']);
    expect(() => formatReadmeBenchTable([])).toThrow(ArgumentError);
    expect(() => formatReadmeBenchTable([legacy, legacy])).toThrow(/results: must hold each suite once \(permute is given twice\)/);
  });
});

describe('README markers', () => {
  const readme = `# title\n\n${BENCH_TABLE_BEGIN}\nold\n${BENCH_TABLE_END}\n\nafter\n`;

  it('replaces only the text between the markers', () => {
    expect(replaceMarkedBlock(readme, 'new\n')).toBe(`# title\n\n${BENCH_TABLE_BEGIN}\nnew\n${BENCH_TABLE_END}\n\nafter\n`);
    expect(extractMarkedBlock(readme)).toBe('old\n');
  });

  it('throws ArgumentError naming the file for missing, repeated or reversed markers', () => {
    const cases = [
      'no markers',
      `${BENCH_TABLE_END}\n${BENCH_TABLE_BEGIN}\n`,
      `${readme}${BENCH_TABLE_BEGIN}\n`,
      `${BENCH_TABLE_BEGIN}${BENCH_TABLE_END}`,
    ];
    for (const text of cases) {
      const error = (() => {
        try {
          replaceMarkedBlock(text, 'x\n', 'README.md');
        } catch (e) {
          return e;
        }
        return undefined;
      })();
      expect(error).toBeInstanceOf(ArgumentError);
      expect((error as ArgumentError).argument).toBe('README.md');
    }
  });
});

describe('readBenchResults: only whole suites reach the README', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tilekit-bench-partial-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('a partial run (cut short, or limited with --only) is refused, naming its file', () => {
    const whole = JSON.parse(readFileSync(join(resultsDir, 'permute.json'), 'utf8')) as Record<string, unknown>;
    writeFileSync(join(dir, 'permute.json'), JSON.stringify({ ...whole, partial: true }));
    let error: unknown;
    try {
      readBenchResults(dir);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ArgumentError);
    expect((error as ArgumentError).argument).toBe(join(dir, 'permute.json'));
    expect((error as ArgumentError).message).toMatch(/partial run .*--resume/);
    writeFileSync(join(dir, 'permute.json'), JSON.stringify(whole));
    expect(readBenchResults(dir).map((r) => r.suite)).toEqual(['permute']);
  });
});

describe('readmeTableCli', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tilekit-bench-readme-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const cli = join(import.meta.dirname, 'readmeTableCli.ts');
  const run = (...args: string[]) =>
    spawnSync(process.execPath, ['--import', 'tsx', '--conditions=@tilekit/source', cli, ...args], { cwd: repoRoot, encoding: 'utf8' });

  it('--check fails with one line on a stale README, --write fixes it, --check then passes', () => {
    const copy = join(dir, 'README.md');
    writeFileSync(copy, `# copy\n\n${BENCH_TABLE_BEGIN}\nstale\n${BENCH_TABLE_END}\n`);
    const stale = run('--check', '--readme', copy);
    expect(stale.status).toBe(1);
    expect(stale.stderr.trim().split('\n')).toHaveLength(1);
    expect(stale.stderr).toMatch(/the benchmark table differs .*npm run bench:readme -- --write/);
    expect(run('--write', '--readme', copy).status).toBe(0);
    expect(readFileSync(copy, 'utf8')).toBe(
      `# copy\n\n${BENCH_TABLE_BEGIN}\n${formatReadmeBenchTable(readBenchResults(resultsDir))}${BENCH_TABLE_END}\n`,
    );
    const fresh = run('--check', '--readme', copy);
    expect(fresh.status, fresh.stderr).toBe(0);
  });

  it('bad input is one line on stderr and exit 2', () => {
    const both = run('--check', '--write');
    expect(both.status).toBe(2);
    expect(both.stderr).toMatch(/^error: give --write or --check, not both/);
    const noMarkers = join(dir, 'plain.md');
    writeFileSync(noMarkers, '# none\n');
    const missing = run('--check', '--readme', noMarkers);
    expect(missing.status).toBe(2);
    expect(missing.stderr.trim().split('\n')).toHaveLength(1);
    expect(missing.stderr).toContain('must hold the markers');
  });
});
