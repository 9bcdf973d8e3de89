// Every command-line program of the workspace, run as a child process with input the user got
// wrong: it must exit 2 with exactly one non-empty line on stderr and no stack frames (the CLI
// contract of @tilekit/host's runCli / runCommand). The inputs are chosen to fail before any
// kernel compiles (parse-time flag checks, cross-flag checks, missing files), plus one compile
// failure through a fake nvcc, so the file runs in seconds.
import { execFile, execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../../..');
const TSX = ['--import', 'tsx', '--conditions=@tilekit/source'];

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function run(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  return new Promise((done) => {
    execFile(process.execPath, [...args], { cwd: root, env: { ...process.env, ...env }, timeout: 90_000 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
      done({ code, stdout, stderr });
    });
  });
}

/** The contract: exit 2, one non-empty line on stderr, no `    at ` stack frame. */
function expectUserError(r: Run, label: string): void {
  const lines = r.stderr.split('\n').filter((l) => l !== '');
  expect({ code: r.code, lines: lines.length, stack: /^\s+at /m.test(r.stderr) }, `${label}\n${r.stderr}`).toEqual({
    code: 2,
    lines: 1,
    stack: false,
  });
  expect(r.stderr.endsWith('\n') && r.stderr.trim() !== '', label).toBe(true);
}

// What this machine has, asked once in a child (the runtime addon loads there, not in this worker).
const machine = JSON.parse(
  execFileSync(
    process.execPath,
    [
      ...TSX,
      '--input-type=module',
      '-e',
      "const { probe } = await import('@tilekit/runtime'); const p = probe(); " +
        'console.log(JSON.stringify({ nvrtc: p.nvrtc, gpu: p.driver && p.deviceCount > 0 }));',
    ],
    { cwd: root, encoding: 'utf8' },
  ),
) as { nvrtc: boolean; gpu: boolean };
if (machine.nvrtc) console.warn('\n!!! SKIPPING the -compiler=nvrtc cases: NVRTC is installed here, so they would compile. !!!\n');
if (machine.gpu) console.warn('\n!!! SKIPPING the no-device bench case: a CUDA device is present. !!!\n');

const example = (name: string) => `examples/${name}/src/main.ts`;

/**
 * [label, program, argv, what stderr must match]: each example with the bad input of a reported
 * bug or a flag kind (the full matrix of every flag runs in-process in examples/<x>/src/badInput.spec.ts).
 */
const EXAMPLE_CASES: readonly (readonly [string, string, readonly string[], string | RegExp])[] = [
  ['dtypes -n=0 (a size below its minimum)', example('dtypes'), ['-n=0'], '-n=0: must be at least 1'],
  ['permute -s=0 (a zero size)', example('permute'), ['-s=0'], '-s=0: must be at least 1'],
  ['permute -init=zz (was a stack after compiling)', example('permute'), ['-init=zz'], '-init=zz: expected uf'],
  ['gemm -init=zz (was a stack after compiling)', example('gemm'), ['-init=zz'], '-init=zz: expected uf'],
  // The whole line: the value is stated once (it used to appear three times).
  ['fmha-fwd -mask=zz', example('fmha-fwd'), ['-mask=zz'], /^error: -mask=zz: must be 0, 1, 2, t, b, t:l,r, b:l,r, xt:w, xb:w or g:y,x\n$/],
  ['fmha-fwd -s=0 (an empty problem)', example('fmha-fwd'), ['-s=0'], '-s=0: the problem needs at least one query row'],
  ['fmha-bwd -dbias=1 (a typed error from main)', example('fmha-bwd'), ['-dbias=1'], 'dBias is not supported'],
  ['sparge -topk=abc (a non-numeric list)', example('sparge'), ['-topk=abc'], '-topk=abc: expected a number'],
];

const BENCH_ENTRIES = ['permute', 'gemm', 'fmhaFwd', 'fmhaBwd', 'sparge', 'ffpa', 'dsaIndexer'].map(
  (s) => `tools/bench/src/suites/${s}.bench.ts`,
);
const TOOL_CASES: readonly (readonly [string, readonly string[], string])[] = [
  ['reportCli without files', [...TSX, 'tools/bench/src/reportCli.ts'], 'no result file given'],
  ['reportCli unknown option', [...TSX, 'tools/bench/src/reportCli.ts', '--bogus'], 'unknown option --bogus'],
  ['reportCli missing file', [...TSX, 'tools/bench/src/reportCli.ts', 'no/such/result.json'], 'no/such/result.json: no such file'],
  ['reportCli not a result', [...TSX, 'tools/bench/src/reportCli.ts', 'package.json'], 'package.json: is not a bench result'],
  ['readmeTableCli unknown option', [...TSX, 'tools/bench/src/readmeTableCli.ts', '--bogus'], "Unknown option '--bogus'"],
  [
    'readmeTableCli --write with --check',
    [...TSX, 'tools/bench/src/readmeTableCli.ts', '--write', '--check'],
    'give --write or --check, not both',
  ],
  [
    'readmeTableCli missing README',
    [...TSX, 'tools/bench/src/readmeTableCli.ts', '--check', '--readme', 'no/such/README.md'],
    'no/such/README.md',
  ],
  ['emittedSourcesCli unknown option', [...TSX, 'tools/workspace/src/emittedSourcesCli.ts', '--bogus'], "Unknown option '--bogus'"],
  [
    'emittedSourcesCli --write with --check',
    [...TSX, 'tools/workspace/src/emittedSourcesCli.ts', '--write', '--check'],
    'give --write or --check, not both',
  ],
  ['spargeCurveCli unknown flag', [...TSX, 'tools/bench/src/spargeCurveCli.ts', '--bogus'], 'unknown flag'],
  ...BENCH_ENTRIES.map((entry) => [`${entry} --bogus`, [...TSX, entry, '--bogus'], "Unknown option '--bogus'"] as const),
  ['printProjects with an argument', ['tools/workspace/src/printProjects.mjs', '--bogus'], 'takes no arguments'],
  ['printTestTotals unknown option', ['tools/workspace/src/printTestTotals.mjs', '--bogus'], 'unexpected arguments'],
  ['printTestTotals not a report', ['tools/workspace/src/printTestTotals.mjs', 'package.json'], 'is not a vitest JSON report'],
  ['device pack unknown option', ['tools/device/pack.mjs', '--bogus'], '--bogus'],
  ['device symbolize without a file', ['tools/device/symbolize.mjs'], ''],
  ['device run-sanitize unknown option', ['tools/device/run-sanitize.mjs', '--bogus'], '--bogus'],
  ['tilekit-cache unknown option', [...TSX, 'libs/runtime/bin/tilekit-cache.mjs', '--bogus'], 'unknown option --bogus'],
  ['consumer test unknown option', ['tools/workspace/src/consumerInstall.mjs', '--bogus'], "Unknown option '--bogus'"],
];

describe.concurrent('command-line programs given bad input: exit 2, one line on stderr, no stack', () => {
  it.each(EXAMPLE_CASES)('%s', async (label, program, argv, mention) => {
    const r = await run([...TSX, program, ...argv]);
    expectUserError(r, label);
    expect(r.stderr, label).toMatch(mention);
    expect(r.stderr.startsWith('error: '), label).toBe(true);
    expect(r.stdout, label).toBe(''); // rejected before any work
  });

  it.each(TOOL_CASES)('%s', async (label, args, mention) => {
    const r = await run(args);
    expectUserError(r, label);
    expect(r.stderr, label).toContain(mention);
  });

  it.runIf(!machine.nvrtc).each(['permute', 'gemm'])('%s -compiler=nvrtc without NVRTC: one line, before compiling', async (name) => {
    const r = await run([...TSX, example(name), '-compiler=nvrtc']);
    expectUserError(r, `${name} -compiler=nvrtc`);
    expect(r.stderr).toMatch(/^error: NVRTC is not available: /);
    expect(r.stdout).toBe('');
  });

  it.runIf(!machine.gpu)('a bench entry without a CUDA device: one line, exit 2', async () => {
    const r = await run([...TSX, BENCH_ENTRIES[0]!]);
    expectUserError(r, 'bench without a device');
    expect(r.stderr).toMatch(/^error: no usable CUDA device/);
  });

  describe('after generating the kernel', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tilekit-cli-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('a compile error (a fake nvcc that fails) is one line naming the kernel and the first error, exit 2', async () => {
      const nvcc = join(dir, 'nvcc');
      writeFileSync(
        nvcc,
        '#!/bin/sh\nif [ "$1" = "--version" ]; then echo "Cuda compilation tools, release 0.0, ' +
          'fake"; exit 0; fi\necho \'kernel.cu(3): error: identifier "bogus" is undefined\' ' +
          '>&2\nexit 1\n',
      );
      chmodSync(nvcc, 0o755);
      const r = await run([...TSX, example('permute'), '-perm=transpose', '-m=64', '-n=64'], {
        TILEKIT_NVCC: nvcc,
        TILEKIT_CACHE_DIR: join(dir, 'cache'),
      });
      expectUserError(r, 'compile error');
      expect(r.stderr).toMatch(
        /^error: nvcc failed to compile kernel permute_transpose_fp16_\w+ for sm_90a; .*kernel\.cu:3: error: identifier "bogus" is undefined/,
      );
      expect(r.stdout).toContain('instance: permute_transpose_fp16'); // it got as far as generating the kernel
    });
  });
});
