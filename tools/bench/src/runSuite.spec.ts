import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { BenchSuite, CaseContext, SuiteCase } from './benchSuite.ts';
import { parseBenchResult } from './benchResult.ts';
import { ArgumentError } from '@tilekit/numeric';
import { caseNameMatches, runSuite, withOwnChecks } from './runSuite.ts';

// The harness end to end without a GPU: a fake reference server (same protocol, no torch) and a
// fake suite whose "kernel" doubles x, exactly or 1% off.
const SERVER = resolve(import.meta.dirname, '../python/testing/fake_reference_server.py');
const out = mkdtempSync(join(tmpdir(), 'tilekit-run-suite-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

function fakeCase(name: string, seed: number): SuiteCase {
  return {
    name,
    params: { n: 4 },
    reference: { op: 'gemm', params: {} },
    seed,
    precision: { y: 'fp32' },
    errorBaselines: ['torch-missing', 'torch-broken', 'torch-good'],
  };
}

function fakeSuite(seen: string[]): BenchSuite {
  return {
    name: 'fake',
    cases: [fakeCase('exact', 7), fakeCase('one_percent_off', 8)],
    runOurs: async (c: SuiteCase, ctx: CaseContext) => {
      seen.push(...Object.keys(ctx.inputs));
      const x = new Float32Array(new Uint8Array(ctx.readInput('x')).buffer);
      const y = x.map((v) => 2 * v * (c.name === 'exact' ? 1 : 1.01));
      return {
        ours: { ms: 1, msMin: 0.98, msMax: 1.1, reps: [1, 1, 1], launchesPerRep: 10, tflops: 2, instance: 'fake_kernel' },
        outputs: { y: ctx.writeTensor('y', 'fp32', [4], y) },
      };
    },
  };
}

describe('runSuite with a fake reference server', async () => {
  const seen: string[] = [];
  const log: string[] = [];
  const work = join(out, 'work');
  const result = await runSuite(fakeSuite(seen), {
    outDir: out,
    workDir: work,
    device: 'Fake GPU',
    commit: 'abc1234',
    torchScript: SERVER,
    log: (line) => log.push(line),
  });

  it('hands ours the files the server wrote and writes a result that parses, with provenance and the generator once', () => {
    expect(seen).toEqual(['x', 'x']);
    const written = parseBenchResult(JSON.parse(readFileSync(join(out, 'fake.json'), 'utf8')));
    expect(written.provenance).toMatchObject({ device: 'Fake GPU', powerLimitW: 3 });
    expect(written.inputs?.generator).toBe('fake manual_seed(<params.seed>)');
    expect(written.cases.map((c) => c.params['seed'])).toEqual([7, 8]);
    expect(log.some((line) => line === 'fake reference server up')).toBe(true);
  });

  it('judges ours against the first sound baseline: the exact kernel passes, the 1% one fails', () => {
    const [exact, off] = result.cases;
    expect(exact!.valid).toBe(true);
    expect(off!.valid).toBe(false);
    expect(exact!.validation?.against).toBe('torch-good');
    expect(off!.validation?.summary).toMatch(/^y FAIL/);
    expect(exact!.maxAbsErr).toBe(0);
  });

  it('judges torch baselines by the same limits and keeps the failed one with its error', () => {
    const b = result.cases[0]!.baselines;
    expect(b['torch-good']).toMatchObject({ valid: true });
    expect(b['torch-broken']).toMatchObject({ valid: false });
    expect(b['torch-missing']).toEqual({ error: 'RuntimeError: No available kernel' });
  });

  it('records the spread and removes the case directories', () => {
    expect(result.cases[0]!.spread).toBeCloseTo(0.12, 10);
    expect(result.cases[0]!.noisy).toBe(true);
    expect(existsSync(work) ? readdirSync(work) : []).toEqual([]);
  });
});

describe('runSuite: our own checks and the baselines handed to ours', async () => {
  const dir = mkdtempSync(join(out, 'checks-'));
  const handed: string[][] = [];
  const base = fakeSuite([]);
  const suite: BenchSuite = {
    ...base,
    runOurs: async (c, ctx) => {
      handed.push(Object.keys(ctx.baselines).sort());
      const mine = await base.runOurs(c, ctx);
      const good = (ctx.baselines['torch-good'] as { gbps?: number; tflops?: number }).tflops;
      return {
        ...mine,
        ours: { ...mine.ours, hbmFraction: 0.5 },
        checks: { 'exact sets': { ok: c.name === 'exact', detail: `torch-good ran at ${good} TFLOP/s` } },
      };
    },
  };
  const log: string[] = [];
  const result = await runSuite(suite, {
    outDir: dir,
    workDir: join(dir, 'work'),
    device: 'Fake GPU',
    commit: 'c',
    torchScript: SERVER,
    log: (l) => log.push(l),
  });

  it("hands ours torch's baselines as prepare measured them, errors included", () => {
    expect(handed).toEqual([
      ['torch-broken', 'torch-good', 'torch-missing'],
      ['torch-broken', 'torch-good', 'torch-missing'],
    ]);
  });

  it('records the checks; a failed check makes the case invalid though the error check passed; the summary names it', () => {
    const [exact, off] = result.cases;
    expect(exact!.checks).toEqual({ 'exact sets': { ok: true, detail: 'torch-good ran at 1 TFLOP/s' } });
    expect(exact!.valid).toBe(true);
    expect(exact!.validation?.summary).toMatch(/\nexact sets ok torch-good ran at 1 TFLOP\/s$/);
    expect(off!.valid).toBe(false);
    expect(off!.validation?.summary).toMatch(/\nexact sets FAIL /);
  });

  it('keeps ours.hbmFraction and prints it after our figure', () => {
    expect(result.cases[0]!.ours.hbmFraction).toBe(0.5);
    expect(log.some((line) => line.includes('exact: ours 1.0000 ms, 2.0 TFLOP/s (50.0% of the HBM read bandwidth)'))).toBe(true);
  });
});

describe('withOwnChecks', () => {
  const verdict = { valid: true, summary: 'y ok', against: 'torch-good' };

  it('leaves a verdict without checks as it is', () => {
    expect(withOwnChecks(verdict, undefined)).toBe(verdict);
  });

  it('is valid only when the verdict and every check are; one line per check', () => {
    const ok = { ok: true, detail: 'a' };
    const bad = { ok: false, detail: 'row 3 differs' };
    expect(withOwnChecks(verdict, { one: ok })).toEqual({ ...verdict, summary: 'y ok\none ok a' });
    expect(withOwnChecks(verdict, { one: ok, two: bad })).toMatchObject({
      valid: false,
      summary: 'y ok\none ok a\ntwo FAIL row 3 differs',
    });
    expect(withOwnChecks({ ...verdict, valid: false }, { one: ok }).valid).toBe(false);
  });
});

describe('runSuite: a run cut short is written as it goes and resumed', async () => {
  const dir = mkdtempSync(join(out, 'resume-'));
  const base = { outDir: dir, workDir: join(dir, 'work'), device: 'Fake GPU', commit: 'abc1234', torchScript: SERVER, log: () => {} };
  const first = await runSuite(fakeSuite([]), { ...base, only: ['exact'], date: '2026-11-01' });
  const firstFile = parseBenchResult(JSON.parse(readFileSync(join(dir, 'fake.json'), 'utf8')));
  const seen: string[] = [];
  const whole = await runSuite(fakeSuite(seen), { ...base, resume: firstFile, date: '2026-11-02' });

  it('a run of some cases is partial, and its file holds what it measured', () => {
    expect(first.partial).toBe(true);
    expect(firstFile.cases.map((c) => c.name)).toEqual(['exact']);
    expect(firstFile.runs).toBeUndefined();
  });

  it('resuming runs only the missing cases and writes the whole suite, in suite order, with each call listed', () => {
    expect(seen).toEqual(['x']);
    expect(whole.partial).toBeUndefined();
    expect(whole.cases.map((c) => c.name)).toEqual(['exact', 'one_percent_off']);
    expect(whole.cases[0]).toEqual(firstFile.cases[0]);
    expect(whole.runs?.map((r) => [r.date, r.cases])).toEqual([
      ['2026-11-01', ['exact']],
      ['2026-11-02', ['one_percent_off']],
    ]);
    expect(whole.date).toBe('2026-11-02');
    expect(parseBenchResult(JSON.parse(readFileSync(join(dir, 'fake.json'), 'utf8')))).toEqual(whole);
  });

  it('refuses to resume another commit or device', async () => {
    for (const [field, changed] of [
      ['commit', { ...base, commit: 'def5678' }],
      ['device', { ...base, device: 'Other GPU' }],
    ] as const) {
      const error = await runSuite(fakeSuite([]), { ...changed, resume: firstFile }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ArgumentError);
      expect((error as ArgumentError).argument).toBe(`resume.${field}`);
    }
  });
});

describe('caseNameMatches (--only)', () => {
  it('a part is a substring of the name; a part ending in $ is the whole name', () => {
    expect(caseNameMatches('ffpa_bwd_b1_h32_s8192_d320_bf16_sm80', 'd320_bf16')).toBe(true);
    expect(caseNameMatches('ffpa_bwd_b1_h32_s8192_d320_bf16_sm80', 'ffpa_bwd_b1_h32_s8192_d320_bf16$')).toBe(false);
    expect(caseNameMatches('ffpa_bwd_b1_h32_s8192_d320_bf16', 'ffpa_bwd_b1_h32_s8192_d320_bf16$')).toBe(true);
    expect(caseNameMatches('x$', 'x$')).toBe(false);
  });
});
