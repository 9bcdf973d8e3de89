// The compute-sanitizer runner without a GPU: its parser on output shaped like each tool's (clean and
// with findings), the plan against the real GPU specs (bundled here; node:test lists their names and
// applies the plan's patterns itself), and the runner end to end through a stand-in compute-sanitizer
// and addon (exit codes, sanitize.json, logs, timeout, budget), plus its command-line errors.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error -- bundle.mjs is a plain .mjs module without types; the test uses two of its pure helpers
import { findGpuSpecs, gpuSpecBundleNames } from '../bundle.mjs';
import { familySelectors, SANITIZE_PLAN, SANITIZER_TOOLS, selectorMatches, selectorPattern } from '../sanitizeCases.mjs';
import { familyResult, kernelOf, parseSanitizerOutput, parseTapTests, summarizeLaunchLog, testCounts } from '../sanitizeReport.mjs';

const deviceDir = join(import.meta.dirname, '..');
const runner = join(deviceDir, 'run-sanitize.mjs');

function runNode(args: readonly string[], env: NodeJS.ProcessEnv = process.env) {
  return spawnSync(process.execPath, args, { encoding: 'utf8', env, timeout: 300_000 });
}

const TAP = [
  'TAP version 13',
  '# Subtest: kernel-fmha-fwd/gpu: fp16 d128 no mask, b2 h2 s259, bhsd',
  'ok 1 - kernel-fmha-fwd/gpu: fp16 d128 no mask, b2 h2 s259, bhsd',
  '  ---',
  '  duration_ms: 1573.99',
  '  ...',
  'ok 2 - kernel-fmha-fwd/gpu: fp16 d128 causal s4097 # SKIP test name does not match pattern',
  '1..2',
  '# tests 2',
  '# pass 1',
  '# fail 0',
].join('\n');

const MEMCHECK_CLEAN = `========= COMPUTE-SANITIZER\n${TAP}\n========= ERROR SUMMARY: 0 errors\n`;

const MEMCHECK_FINDINGS = [
  '========= COMPUTE-SANITIZER',
  '========= Invalid __global__ read of size 16 bytes',
  '=========     at fmha_fwd_sm90_fp16_d128_none_128x128_s2_split0+0x1f30 in /tmp/tilekit-gpu-tests-x/fmha_fwd.cu:812',
  '=========     by thread (128,0,0) in block (2,1,0)',
  '=========     Address 0x7f1c2e000c10 is out of bounds',
  '=========     and is 17 bytes after the nearest allocation at 0x7f1c2e000000 of size 3072 bytes',
  '=========     Saved host backtrace up to driver entry point at kernel launch time',
  '=========         Host Frame: [0x2f3e1d] in libcuda.so.1',
  '=========         Host Frame: [0x1a2b] in tilekit_runtime.node',
  '=========',
  TAP,
  '========= Program hit CUDA_ERROR_INVALID_VALUE (error 1) due to "invalid argument" on CUDA API call to cuFuncGetParamInfo.',
  '=========     Saved host backtrace up to driver entry point at error',
  '=========         Host Frame: [0x2f3e1d] in libcuda.so.1',
  '=========',
  '========= Target application returned an error',
  '========= ERROR SUMMARY: 14 errors',
  '========= ERROR SUMMARY: 12 errors were not printed. Use --print-limit option to adjust the number of printed errors',
  '',
].join('\n');

const RACECHECK_CLEAN = `========= COMPUTE-SANITIZER\n${TAP}\n========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n`;

const RACECHECK_FINDINGS = [
  '========= COMPUTE-SANITIZER',
  '========= Error: Potential RAW hazard detected at __shared__ 0x1a0 in block (0,0,0) :',
  '=========     Write Thread (32,0,0) at fmha_bwd_dq_dk_dv_sm90_fp16_d128_none_128x64_s2_dqatomic+0x4c10 in /tmp/bwd.cu:301',
  '=========     Read Thread (160,0,0) at fmha_bwd_dq_dk_dv_sm90_fp16_d128_none_128x64_s2_dqatomic+0x5a00 in /tmp/bwd.cu:344',
  '=========     Current Value : 0',
  '=========     Saved host backtrace up to driver entry point at kernel launch time',
  '=========         Host Frame: [0x2f3e1d] in libcuda.so.1',
  '=========',
  // Some versions print the threads flush with the header.
  '========= Warning: (Warp Level Programming) Potential WAR hazard detected at __shared__ 0x40 in block (1,0,0) :',
  '========= Read Thread (0,0,0) at sumKernel(int *, int *)+0x120 in warp_error.cu:56',
  '========= Write Thread (1,0,0) at sumKernel(int *, int *)+0x90 in warp_error.cu:44',
  '========= Current Value : 35, Incoming Value : 36',
  '=========',
  TAP,
  '========= RACECHECK SUMMARY: 61440 hazards displayed (61439 errors, 1 warning)',
  '',
].join('\n');

const SYNCCHECK_CLEAN = `========= COMPUTE-SANITIZER\n${TAP}\n========= ERROR SUMMARY: 0 errors\n`;

const SYNCCHECK_FINDINGS = [
  '========= COMPUTE-SANITIZER',
  '========= Warning: Detected overflow of tracked cuda::barrier structures. Results might be incorrect. Try using --num-cuda-barriers to fix the issue',
  '========= Barrier error detected. Divergent thread(s) in warp',
  '=========     at gemm_sm90_ws_fp16_tn_128x256x64_s4_v2+0x3f0 in /tmp/gemm.cu:90',
  '=========     by thread (37,0,0) in block (0,0,0)',
  '=========',
  '========= Warpgroup MMA sequence error detected. Inactive threads in warpgroup',
  '=========     at gemm_sm90_ws_fp16_tn_128x256x64_s4_v2+0x5d0 in /tmp/gemm.cu:120',
  '=========     by thread (64,0,0) in block (1,0,0)',
  '=========',
  TAP,
  '========= ERROR SUMMARY: 2 errors',
  '',
].join('\n');

const INITCHECK_CLEAN = `========= COMPUTE-SANITIZER\n${TAP}\n========= ERROR SUMMARY: 0 errors\n`;

const INITCHECK_FINDINGS = [
  '========= COMPUTE-SANITIZER',
  '========= Uninitialized __global__ memory read of size 4 bytes',
  '=========     at sparge_pool_sm90_fp16_d128_b128x64+0x2a0 in /tmp/pool.cu:55',
  '=========     by thread (5,0,0) in block (3,0,0)',
  '=========     Address 0x7f00a0000c04',
  '=========',
  TAP,
  '========= ERROR SUMMARY: 1 error',
  '',
].join('\n');

describe('parseSanitizerOutput on each tool', () => {
  it.each([
    ['memcheck', MEMCHECK_CLEAN, { errors: 0 }],
    ['racecheck', RACECHECK_CLEAN, { hazards: 0, raceErrors: 0, raceWarnings: 0 }],
    ['synccheck', SYNCCHECK_CLEAN, { errors: 0 }],
    ['initcheck', INITCHECK_CLEAN, { errors: 0 }],
  ])('%s, clean: complete, no finding, the program lines ignored', (_, text, summary) => {
    const r = parseSanitizerOutput(text);
    expect(r).toMatchObject({ complete: true, findings: 0, reports: [], notes: [], exitedWithError: false });
    expect(r.summary).toEqual(summary);
  });

  it('memcheck: the summary counts the reports it did not print; a device access names its kernel, an API error none', () => {
    const r = parseSanitizerOutput(MEMCHECK_FINDINGS);
    expect(r.complete).toBe(true);
    expect(r.findings).toBe(14);
    expect(r.summary).toEqual({ errors: 14, notPrinted: 12 });
    expect(r.exitedWithError).toBe(true);
    expect(r.reports.map((x) => [x.kind, x.kernel])).toEqual([
      ['Invalid __global__ read of size 16 bytes', 'fmha_fwd_sm90_fp16_d128_none_128x128_s2_split0'],
      ['Program hit CUDA_ERROR_INVALID_VALUE (error 1) due to "invalid argument" on CUDA API call to cuFuncGetParamInfo.', null],
    ]);
    expect(r.reports[0]!.text).toContain('is out of bounds');
  });

  it('racecheck: hazards of both severities, threads indented or flush, each naming its kernel', () => {
    const r = parseSanitizerOutput(RACECHECK_FINDINGS);
    expect(r.findings).toBe(61440);
    expect(r.summary).toEqual({ hazards: 61440, raceErrors: 61439, raceWarnings: 1 });
    expect(r.reports.map((x) => x.kernel)).toEqual(['fmha_bwd_dq_dk_dv_sm90_fp16_d128_none_128x64_s2_dqatomic', 'sumKernel']);
    expect(r.reports[0]!.kind).toBe('Error: Potential RAW hazard detected at __shared__ 0x1a0 in block (0,0,0)');
    expect(r.reports[1]!.text).toContain('Incoming Value : 36');
  });

  it("synccheck: barrier and warpgroup MMA errors are findings; the tool's own warning is a note", () => {
    const r = parseSanitizerOutput(SYNCCHECK_FINDINGS);
    expect(r.findings).toBe(2);
    expect(r.reports.map((x) => x.kind)).toEqual([
      'Barrier error detected. Divergent thread(s) in warp',
      'Warpgroup MMA sequence error detected. Inactive threads in warpgroup',
    ]);
    expect(new Set(r.reports.map((x) => x.kernel))).toEqual(new Set(['gemm_sm90_ws_fp16_tn_128x256x64_s4_v2']));
    expect(r.notes).toEqual([expect.stringMatching(/^Warning: Detected overflow of tracked cuda::barrier/)]);
  });

  it('initcheck: an uninitialized read names its kernel', () => {
    const r = parseSanitizerOutput(INITCHECK_FINDINGS);
    expect(r.findings).toBe(1);
    expect(r.reports).toEqual([
      {
        kind: 'Uninitialized __global__ memory read of size 4 bytes',
        kernel: 'sparge_pool_sm90_fp16_d128_b128x64',
        text: expect.stringContaining('Address 0x7f00a0000c04'),
      },
    ]);
  });

  it('a run stopped before its summary is incomplete, even with reports read', () => {
    const cut = MEMCHECK_FINDINGS.slice(0, MEMCHECK_FINDINGS.indexOf('========= Target application'));
    expect(parseSanitizerOutput(cut)).toMatchObject({ complete: false, findings: 2, summary: null });
    expect(parseSanitizerOutput(TAP)).toMatchObject({ complete: false, findings: 0 });
  });

  it('kernelOf: the last device frame, templated C++ names, the old "at 0x… in file:line:kernel(args)" form', () => {
    expect(
      kernelOf([
        'Invalid __local__ write of size 4 bytes',
        'at helper(int)+0x30 in a.cu:3',
        'Device Frame: helper(int)+0x30 in a.cu:3',
        'Device Frame: outer_kernel(int*)+0x80 in a.cu:9',
      ]),
    ).toBe('outer_kernel');
    expect(kernelOf(['Invalid __global__ read of size 4 bytes', 'at void ns::k<int, 3>(float*)+0x10 in a.cu:1'])).toBe('ns::k');
    expect(
      kernelOf([
        'WARN: Potential RAW hazard detected at __shared__ 0x3 in block (0, 0, 0) :',
        'Write Thread (31, 0, 0) at 0x00000148 in ./race.cu:3:test(int*, int*)',
      ]),
    ).toBe('test');
    expect(
      kernelOf([
        'Error: Race reported between Write access at WAW()+0x2f0 in raceWAW.cu:20',
        'and Write access at WAW()+0x2f0 in raceWAW.cu:20 [2 hazards]',
      ]),
    ).toBe('WAW');
    expect(kernelOf(['Leaked 64 bytes at 0x400200200'])).toBeNull();
  });
});

describe("node:test TAP, the launch log and one family's result", () => {
  it('parseTapTests: statuses, skip reasons, escaped names; testCounts leaves the unmatched out', () => {
    const tests = parseTapTests(
      [
        'ok 1 - a \\# b',
        'not ok 2 - c',
        'ok 3 - d # SKIP no CUDA device',
        'ok 4 - e # SKIP test name does not match pattern',
        'ok 5 - f # TODO later',
        '  ok 1 - nested',
      ].join('\n'),
    );
    expect(tests.map((t) => [t.name, t.status])).toEqual([
      ['a # b', 'passed'],
      ['c', 'failed'],
      ['d', 'skipped'],
      ['e', 'unmatched'],
      ['f', 'todo'],
    ]);
    expect(testCounts(tests)).toEqual({ matched: 4, passed: 1, failed: 1, skipped: 2, failedTests: ['c'] });
  });

  it('summarizeLaunchLog counts launches per kernel', () => {
    expect(summarizeLaunchLog('b\na\nb\n\n')).toEqual({ launches: 3, kernels: { a: 1, b: 2 } });
  });

  it('familyResult: clean, findings (by kernel, with a sample), incomplete with its reasons', () => {
    const run = { launchLog: 'k1\nk2\nk1\n', seconds: 12.34, exitCode: 0, signal: null, timedOut: false, log: 'sanitize/memcheck-x.log' };
    expect(familyResult({ ...run, output: MEMCHECK_CLEAN })).toMatchObject({
      status: 'clean',
      kernels: ['k1', 'k2'],
      launches: 3,
      findings: 0,
      problems: [],
      seconds: 12.3,
      tests: { matched: 1, passed: 1 },
    });
    const found = familyResult({ ...run, output: RACECHECK_FINDINGS });
    expect(found).toMatchObject({
      status: 'findings',
      findings: 61440,
      findingsByKernel: { fmha_bwd_dq_dk_dv_sm90_fp16_d128_none_128x64_s2_dqatomic: 1, sumKernel: 1 },
    });
    expect(found.sample).toHaveLength(2);
    const stopped = familyResult({
      ...run,
      output: TAP.split('\n').slice(0, 2).join('\n'),
      exitCode: null,
      signal: 'SIGTERM',
      timedOut: true,
    });
    expect(stopped.status).toBe('incomplete');
    expect(stopped.problems).toEqual([expect.stringMatching(/per-run timeout/), expect.stringMatching(/no test matched/)]);
    const failing = familyResult({ ...run, output: MEMCHECK_CLEAN.replace('ok 1 -', 'not ok 1 -') });
    expect(failing).toMatchObject({
      status: 'incomplete',
      problems: ['1 test(s) failed under the sanitizer: kernel-fmha-fwd/gpu: fp16 d128 no mask, b2 h2 s259, bhsd'],
    });
  });
});

/** The brief's kernel families, each a family of the plan. */
const FAMILIES = [
  'fmhaFwd',
  'ffpa',
  'fmhaFwdSm80',
  'fmhaBwd',
  'spargeBlockMap',
  'spargeAttention',
  'dsa',
  'gemm',
  'gemmSm80',
  'permute',
  'primitives',
];

interface PlanReport {
  family: string;
  bundles: Record<string, { tests: number; selected: string[] }>;
  problems: string[];
}

describe('the plan against the GPU specs', () => {
  let plan: ReturnType<typeof runNode>;
  let reports: PlanReport[] = [];

  beforeAll(() => {
    plan = runNode([runner, '--check-plan']);
    const json = /^PLAN JSON (.*)$/m.exec(plan.stdout)?.[1];
    if (json !== undefined) reports = JSON.parse(json) as PlanReport[];
  }, 300_000);

  it('has every kernel family, the four tools, and only bundles of existing GPU specs', () => {
    expect(SANITIZE_PLAN.map((f) => f.family)).toEqual(FAMILIES);
    expect(Object.keys(SANITIZER_TOOLS)).toEqual(['memcheck', 'racecheck', 'synccheck', 'initcheck']);
    expect(SANITIZER_TOOLS.racecheck).toEqual(['--tool', 'racecheck', '--racecheck-report', 'hazard']);
    const bundles = new Set(gpuSpecBundleNames(findGpuSpecs()));
    for (const f of SANITIZE_PLAN) for (const b of Object.keys(f.bundles)) expect(bundles.has(b), `${f.family}: ${b}`).toBe(true);
  });

  it('every selector matches a test of its own bundle, and node selects exactly what the plan means', () => {
    expect(plan.status, plan.stdout + plan.stderr).toBe(0);
    expect(reports.map((r) => r.family)).toEqual(FAMILIES);
    for (const r of reports) expect(r.problems, r.family).toEqual([]);
    for (const f of SANITIZE_PLAN) {
      const report = reports.find((r) => r.family === f.family)!;
      for (const { bundle, selector } of familySelectors(f))
        expect(
          report.bundles[bundle]!.selected.some((n) => selectorMatches(selector, n)),
          `${bundle}: ${JSON.stringify(selector)}`,
        ).toBe(true);
    }
  });

  it('picks the paths each family claims: masks, varlen with empty sequences, GQA, split-KV, both dQ modes, d256, both pipelines × every vote, int8', () => {
    const names = (family: string): string[] =>
      Object.values(reports.find((r) => r.family === family)?.bundles ?? {}).flatMap((b) => b.selected);
    const has = (family: string, re: RegExp): void =>
      expect(
        names(family).some((n) => re.test(n)),
        `${family}: ${re}`,
      ).toBe(true);
    for (const re of [/causal bottom-right/, /window/, /varlen.* q [\d,]*\b0\b/, /GQA/, /split-KV/, /d256/, /d64/]) has('fmhaFwd', re);
    for (const re of [/varlen.* q [\d,]*\b0\b/, /window/, /GQA/, /d256/]) has('fmhaFwdSm80', re);
    for (const re of [/varlen.* q [\d,]*\b0\b/, /window/, /GQA/, /fully masked/, /\(\d+ \+ \d+ columns\)/, /d1024/, /deterministic/])
      has('ffpa', re);
    for (const re of [/\(atomic\)/, /\(deterministic/, /varlen.* q [\d,]*\b0\b/, /GQA/, /window/, /d256/, /fully masked/])
      has('fmhaBwd', re);
    for (const re of [/^sparge pool/, /select: .*topk/, /select: .*cdf/, /group/]) has('spargeBlockMap', re);
    for (const p of ['vsa', 'jenga'])
      for (const vote of ['no skip', 'warp', 'block']) has('spargeAttention', new RegExp(`attention: ${p} .*${vote}`));
    has('spargeAttention', /int8/);
    has('spargeAttention', /pvThreshold \d/);
  });

  it('keeps the cases small: no sequence of 1000+ except in the selection (it works on pooled blocks)', () => {
    for (const r of reports) {
      if (r.family === 'spargeBlockMap') continue;
      for (const name of Object.values(r.bundles).flatMap((b) => b.selected)) {
        const lengths = [...name.matchAll(/\b(?:s|sq|sk)\s?(\d+)|\b(?:q|k|varlen) ((?:\d+,)+\d+)/g)].flatMap((m) =>
          (m[1] ?? m[2]!).split(',').map(Number),
        );
        expect(Math.max(0, ...lengths), `${r.family}: ${name}`).toBeLessThan(1000);
      }
    }
  });

  it('selectorPattern escapes the name for node: exact names anchored at both ends, prefixes at the start', () => {
    expect(new RegExp(selectorPattern('a (b) 1+1 x*y [z] $5 / q?')).test('a (b) 1+1 x*y [z] $5 / q?')).toBe(true);
    expect(new RegExp(selectorPattern('a (b)')).test('a (b) more')).toBe(false);
    expect(new RegExp(selectorPattern({ prefix: 'tile/gpu: ' })).test('tile/gpu: load')).toBe(true);
    expect(new RegExp(selectorPattern({ prefix: 'tile/gpu: ' })).test('x tile/gpu: load')).toBe(false);
  });
});

/** A stand-in compute-sanitizer: prints what the tool would around canned TAP output, appends to the launch log, records its arguments. */
const FAKE_SANITIZER = `
const fs = require('node:fs');
const args = process.argv.slice(2);
if (args[0] === '--version') {
  console.log('NVIDIA (R) Compute Sanitizer\\nVersion 2099.1.0 (stand-in)');
  process.exit(0);
}
fs.appendFileSync(process.env.FAKE_ARGS_FILE, JSON.stringify(args) + '\\n');
const tool = args[args.indexOf('--tool') + 1];
const mode = process.env.FAKE_SANITIZER_MODE;
console.log('========= COMPUTE-SANITIZER');
if (mode === 'hang') setInterval(() => {}, 1000);
else {
  fs.appendFileSync(process.env.TILEKIT_LAUNCH_LOG, 'permute_a\\npermute_a\\npermute_b\\n');
  console.log('TAP version 13');
  console.log('ok 1 - permute/gpu: every catalog instance matches the CPU reference on odd shapes');
  console.log('ok 2 - permute/gpu: 64-bit offsets beyond 2^31 elements (6 GiB tensors) # SKIP test name does not match pattern');
  if (mode === 'findings' && tool === 'memcheck') {
    console.log('========= Invalid __global__ write of size 2 bytes');
    console.log('=========     at permute_b+0x1c0 in /tmp/p.cu:40');
    console.log('=========     by thread (3,0,0) in block (7,0,0)');
    console.log('=========');
    console.log('========= ERROR SUMMARY: 1 error');
  } else console.log(tool === 'racecheck' ? '========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)' : '========= ERROR SUMMARY: 0 errors');
}
`;

describe('run-sanitize.mjs end to end with a stand-in compute-sanitizer and addon', () => {
  let dir = '';
  let env: NodeJS.ProcessEnv = {};
  let common: string[] = [];

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'tilekit-sanitize-spec-'));
    writeFileSync(join(dir, 'compute-sanitizer'), `#!${process.execPath}\n${FAKE_SANITIZER}`);
    chmodSync(join(dir, 'compute-sanitizer'), 0o755);
    writeFileSync(join(dir, 'addon.cjs'), 'module.exports = { probe: () => ({ driver: true, deviceCount: 1, nvrtc: false }) };\n');
    // The runner checks that the family's bundles exist; the stand-in never runs them.
    mkdirSync(join(dir, 'gpu-tests'));
    writeFileSync(join(dir, 'gpu-tests', 'kernel-permute-permute.mjs'), '');
    env = { ...process.env, FAKE_ARGS_FILE: join(dir, 'args.jsonl') };
    common = [
      '--sanitizer',
      join(dir, 'compute-sanitizer'),
      '--addon',
      join(dir, 'addon.cjs'),
      '--bundles',
      join(dir, 'gpu-tests'),
      '--families',
      'permute',
    ];
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const sanitizeJson = (out: string) =>
    JSON.parse(readFileSync(join(out, 'sanitize.json'), 'utf8')) as {
      status: string;
      sanitizer: string;
      findings: number;
      tools: Record<
        string,
        {
          families: Record<
            string,
            {
              status: string;
              kernels: string[];
              launches: number;
              findings: number;
              sample: { kernel: string }[];
              problems: string[];
              log: string;
            }
          >;
        }
      >;
    };

  it('clean: every tool runs the family once with its arguments, sanitize.json and the logs are written, exit 0', () => {
    const out = join(dir, 'clean');
    const run = runNode([runner, ...common, '--out', out], { ...env, FAKE_SANITIZER_MODE: 'clean' });
    expect(run.status, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toMatch(/SANITIZE: clean — 0 findings in 4 runs/);
    const json = sanitizeJson(out);
    expect(json).toMatchObject({ status: 'clean', sanitizer: 'Version 2099.1.0 (stand-in)' });
    expect(Object.keys(json.tools)).toEqual(['memcheck', 'racecheck', 'synccheck', 'initcheck']);
    for (const tool of Object.values(json.tools)) {
      expect(tool.families['permute']).toMatchObject({ status: 'clean', kernels: ['permute_a', 'permute_b'], launches: 3, findings: 0 });
      expect(existsSync(join(out, tool.families['permute']!.log))).toBe(true);
    }
    const calls = readFileSync(join(dir, 'args.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as string[]);
    expect(calls.map((a) => a.slice(0, a.indexOf('--print-limit')))).toEqual(Object.values(SANITIZER_TOOLS));
    for (const args of calls) {
      expect(args).toEqual(
        expect.arrayContaining([
          '--target-processes',
          'application-only',
          process.execPath,
          '--test-reporter=tap',
          join(deviceDir, 'sanitize-entry.mjs'),
          join(dir, 'gpu-tests', 'kernel-permute-permute.mjs'),
        ]),
      );
      expect(args).toContain(
        `--test-name-pattern=${selectorPattern('permute/gpu: every catalog instance matches the CPU reference on odd shapes')}`,
      );
    }
  });

  it('a finding: exit 1, counted per kernel with a sample', () => {
    const out = join(dir, 'findings');
    const run = runNode([runner, ...common, '--out', out, '--tools', 'memcheck,synccheck'], { ...env, FAKE_SANITIZER_MODE: 'findings' });
    expect(run.status).toBe(1);
    expect(run.stdout).toMatch(/memcheck × permute: FINDINGS/);
    const json = sanitizeJson(out);
    expect(json).toMatchObject({ status: 'findings', findings: 1 });
    expect(json.tools['memcheck']!.families['permute']).toMatchObject({ findings: 1, sample: [{ kernel: 'permute_b' }] });
    expect(json.tools['synccheck']!.families['permute']!.status).toBe('clean');
  });

  it('a run past --timeout is stopped and incomplete, exit 1', () => {
    const out = join(dir, 'timeout');
    const run = runNode([runner, ...common, '--out', out, '--tools', 'memcheck', '--timeout', '1'], {
      ...env,
      FAKE_SANITIZER_MODE: 'hang',
    });
    expect(run.status).toBe(1);
    const json = sanitizeJson(out);
    expect(json.status).toBe('incomplete');
    expect(json.tools['memcheck']!.families['permute']!.problems[0]).toMatch(/^stopped after the per-run timeout/);
  }, 60_000);

  it('--budget stops the run going when it runs out and starts no other; exit 1', () => {
    const out = join(dir, 'budget');
    const run = runNode([runner, ...common, '--out', out, '--tools', 'memcheck,racecheck', '--budget', '1'], {
      ...env,
      FAKE_SANITIZER_MODE: 'hang',
    });
    expect(run.status).toBe(1);
    const json = sanitizeJson(out);
    expect(json.tools['memcheck']!.families['permute']!.problems[0]).toMatch(/^stopped when the --budget of 1 s ran out/);
    expect(json.tools['racecheck']!.families['permute']!.problems).toEqual(['not run: the --budget of 1 s was spent']);
    expect(run.stdout).toMatch(/racecheck × permute: NOT RUN/);
  }, 60_000);

  it('no CUDA device: SKIPPED, loudly, exit 0, nothing written', () => {
    writeFileSync(
      join(dir, 'nodevice.cjs'),
      "module.exports = { probe: () => ({ driver: true, deviceCount: 0, nvrtc: false, reason: 'no devices' }) };\n",
    );
    const out = join(dir, 'nodevice');
    const run = runNode([runner, ...common, '--addon', join(dir, 'nodevice.cjs'), '--out', out], env);
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^SKIPPED: no CUDA device: no devices/m);
    expect(existsSync(join(out, 'sanitize.json'))).toBe(false);
  });

  it.skipIf(existsSync('/usr/local/cuda/bin/compute-sanitizer'))('no compute-sanitizer anywhere: SKIPPED, loudly, exit 0', () => {
    const run = runNode([runner, '--families', 'permute', '--out', join(dir, 'none')], { ...env, PATH: '/nonexistent' });
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^SKIPPED: no compute-sanitizer/m);
  });
});

describe('run-sanitize.mjs command-line errors', () => {
  it('--help prints the usage and exits 0', () => {
    const run = runNode([runner, '--help']);
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^usage: node tools\/device\/run-sanitize\.mjs/);
  });

  it.each([
    [['--bogus'], /Unknown option '--bogus'/],
    [['--tools', 'memcheck,valgrind'], /--tools: unknown 'valgrind'; one or more of memcheck, racecheck, synccheck, initcheck/],
    [['--tools', ','], /--tools: unknown empty list/],
    [['--families', 'fmhaFwd,nope'], /--families: unknown 'nope'/],
    [['--timeout', 'soon'], /--timeout must be a positive number, got 'soon'/],
    [['--print-limit', '2.5'], /--print-limit must be a positive integer/],
    [['--budget=-1'], /--budget must be a positive number/],
    [['--budget', '-1'], /Option '--budget' argument is ambiguous/],
    [['--sanitizer', '/nonexistent/compute-sanitizer'], /--sanitizer: no file/],
    [['--bundles', '/nonexistent/gpu-tests'], /--bundles: no folder/],
    [['stray'], /Unexpected argument 'stray'/],
  ])('%j: one line on stderr, exit 2', (args, message) => {
    const run = runNode([runner, ...args]);
    expect(run.status).toBe(2);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toMatch(message);
    expect(run.stderr).toMatch(/^run-sanitize: .*\(see --help\)$/m);
  });
});
