// Provenance of the GPU-machine records (provenance.mjs): nvidia-smi's line parsed and its absence
// tolerated, the commit from a pack's manifest or git, and both writers (run-gpu-tests.mjs,
// run-sanitize.mjs) end to end with a stand-in nvidia-smi, addon and compute-sanitizer: the JSON
// they write is headed by commit, device, date and the card's state.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manifestCommit, NVIDIA_SMI_FIELDS, parseNvidiaSmiLine, queryNvidiaSmi, recordCommit, recordProvenance } from '../provenance.mjs';

const deviceDir = join(import.meta.dirname, '..');
const repoRoot = join(deviceDir, '..', '..');
const SHA = '691afb27ac3f8e011f4bb6b601eb648fe776b88b';
const SMI_LINE = 'NVIDIA H100 80GB HBM3, 580.159.04, 1980, 1980, 700.00';

describe('nvidia-smi', () => {
  it('queries name, driver, SM clock, max SM clock and power limit, without units', () => {
    let asked: readonly string[] = [];
    const state = queryNvidiaSmi((args) => {
      asked = args;
      return `${SMI_LINE}\nNVIDIA H100 80GB HBM3, 580.159.04, 345, 1980, 700.00\n`;
    });
    expect(asked).toEqual(['--query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit', '--format=csv,noheader,nounits']);
    expect(NVIDIA_SMI_FIELDS.map(([, key]) => key)).toEqual(['device', 'driver', 'smClockMHz', 'smClockMaxMHz', 'powerLimitW']);
    expect(state).toEqual({
      device: 'NVIDIA H100 80GB HBM3',
      driver: '580.159.04',
      smClockMHz: 1980,
      smClockMaxMHz: 1980,
      powerLimitW: 700,
    });
  });

  it('null for a field it reports as [N/A] or [Not Supported]', () => {
    expect(parseNvidiaSmiLine('NVIDIA H200, 570.86, [N/A], 1980, [Not Supported]')).toEqual({
      device: 'NVIDIA H200',
      driver: '570.86',
      smClockMHz: null,
      smClockMaxMHz: 1980,
      powerLimitW: null,
    });
    expect(() => parseNvidiaSmiLine('NVIDIA H200, 570.86')).toThrow(/expected 5 fields, got 2/);
  });

  it('without nvidia-smi (or with no GPU listed) every field is null and the error says why', () => {
    const missing = queryNvidiaSmi(() => {
      throw new Error('spawnSync nvidia-smi ENOENT');
    });
    expect(missing).toEqual({
      device: null,
      driver: null,
      smClockMHz: null,
      smClockMaxMHz: null,
      powerLimitW: null,
      error: 'nvidia-smi: spawnSync nvidia-smi ENOENT',
    });
    expect(queryNvidiaSmi(() => '\n').error).toBe('nvidia-smi: nvidia-smi printed no GPU');
  });
});

describe('the commit of a record', () => {
  let dir = '';
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'tilekit-provenance-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("a pack's manifest: its commit, +uncommitted when the packed tree was dirty", () => {
    writeFileSync(join(dir, 'clean.json'), JSON.stringify({ commit: SHA, dirty: false }));
    writeFileSync(join(dir, 'dirty.json'), JSON.stringify({ commit: SHA, dirty: true }));
    writeFileSync(join(dir, 'broken.json'), '{ not json');
    expect(manifestCommit(join(dir, 'clean.json'))).toBe(SHA);
    expect(manifestCommit(join(dir, 'dirty.json'))).toBe(`${SHA}+uncommitted`);
    expect(manifestCommit(join(dir, 'broken.json'))).toBeUndefined();
    expect(manifestCommit(join(dir, 'none.json'))).toBeUndefined();
  });

  it('bundles from a pack without a readable manifest are unknown, never the checkout (it may hold other code)', () => {
    expect(recordCommit({ manifestPath: join(dir, 'none.json'), root: repoRoot })).toBe('unknown');
  });

  it("bundles made here: the checkout's git HEAD; outside a repository unknown", () => {
    const head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: repoRoot }).toString().trim();
    expect(recordCommit({ root: repoRoot })).toMatch(new RegExp(`^${head}(\\+uncommitted)?$`));
    expect(recordCommit({ root: dir })).toBe('unknown');
  });

  it('recordProvenance: commit, device, ISO date, the card state (the device name once)', () => {
    writeFileSync(join(dir, 'manifest.json'), JSON.stringify({ commit: SHA, dirty: false }));
    const record = recordProvenance({
      manifestPath: join(dir, 'manifest.json'),
      now: new Date('2026-11-26T10:00:00Z'),
      smi: () => parseNvidiaSmiLine(SMI_LINE),
    });
    expect(record).toEqual({
      commit: SHA,
      device: 'NVIDIA H100 80GB HBM3',
      date: '2026-11-26T10:00:00.000Z',
      provenance: { driver: '580.159.04', smClockMHz: 1980, smClockMaxMHz: 1980, powerLimitW: 700 },
    });
    const blind = recordProvenance({ root: dir, fallbackDevice: 'none', smi: () => queryNvidiaSmi(() => '') });
    expect(blind.device).toBe('none');
    expect(blind.provenance.error).toMatch(/^nvidia-smi: /);
  });
});

describe('the writers put provenance into their JSON (stand-in nvidia-smi, addon, compute-sanitizer)', () => {
  let dir = '';
  let env: NodeJS.ProcessEnv = {};
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'tilekit-provenance-run-'));
    const bin = join(dir, 'bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'nvidia-smi'), `#!/bin/sh\necho '${SMI_LINE}'\n`);
    writeFileSync(
      join(bin, 'compute-sanitizer'),
      `#!/bin/sh\necho 'Version 2099.1.0 (stand-in)'\necho '========= ERROR SUMMARY: 0 errors'\n`,
    );
    chmodSync(join(bin, 'nvidia-smi'), 0o755);
    chmodSync(join(bin, 'compute-sanitizer'), 0o755);
    // A pack laid out like .device/: manifest.json beside gpu-tests/.
    mkdirSync(join(dir, 'pack', 'gpu-tests'), { recursive: true });
    writeFileSync(join(dir, 'pack', 'manifest.json'), JSON.stringify({ commit: SHA, dirty: true }));
    writeFileSync(
      join(dir, 'pack', 'gpu-tests', 'kernel-permute-permute.mjs'),
      "import { test } from 'node:test';\ntest('a stand-in GPU test', () => {});\n",
    );
    writeFileSync(join(dir, 'addon.cjs'), 'module.exports = { probe: () => ({ driver: true, deviceCount: 1, nvrtc: false }) };\n');
    env = { ...process.env, PATH: `${bin}${delimiter}${process.env['PATH'] ?? ''}` };
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const expected = {
    commit: `${SHA}+uncommitted`,
    device: 'NVIDIA H100 80GB HBM3',
    provenance: { driver: '580.159.04', smClockMHz: 1980, smClockMaxMHz: 1980, powerLimitW: 700 },
  };

  it('run-gpu-tests.mjs: gpu-tests.json', () => {
    const out = join(dir, 'out-tests');
    const run = spawnSync(
      process.execPath,
      [join(deviceDir, 'run-gpu-tests.mjs'), '--bundles', join(dir, 'pack', 'gpu-tests'), '--addon', join(dir, 'addon.cjs'), '--out', out],
      { env, encoding: 'utf8', timeout: 120_000 },
    );
    expect(run.status, run.stdout + run.stderr).toBe(0);
    const json = JSON.parse(readFileSync(join(out, 'gpu-tests.json'), 'utf8')) as Record<string, unknown>;
    expect(json).toMatchObject(expected);
    expect(Object.keys(json).slice(0, 4)).toEqual(['commit', 'device', 'date', 'provenance']);
    expect(Date.parse(json['date'] as string)).not.toBeNaN();
    expect(json['counts']).toEqual({ total: 1, passed: 1, failed: 0, skipped: 0 });
  });

  it('run-sanitize.mjs: sanitize.json', () => {
    const out = join(dir, 'out-sanitize');
    const args = [
      '--bundles',
      join(dir, 'pack', 'gpu-tests'),
      '--addon',
      join(dir, 'addon.cjs'),
      '--families',
      'permute',
      '--tools',
      'memcheck',
    ];
    const run = spawnSync(
      process.execPath,
      [join(deviceDir, 'run-sanitize.mjs'), ...args, '--sanitizer', join(dir, 'bin', 'compute-sanitizer'), '--out', out],
      {
        env,
        encoding: 'utf8',
        timeout: 120_000,
      },
    );
    expect(run.stderr).toBe('');
    const json = JSON.parse(readFileSync(join(out, 'sanitize.json'), 'utf8')) as Record<string, unknown>;
    expect(json).toMatchObject(expected);
    expect(Date.parse(json['date'] as string)).not.toBeNaN();
  });
});
