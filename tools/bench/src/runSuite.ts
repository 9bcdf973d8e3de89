import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BenchSuite, CaseContext, OwnCheck, SuiteCase } from './benchSuite.ts';
import { ArgumentError } from '@tilekit/numeric';
import { parseBenchResult, type BenchCase, type BenchRunPart, type BenchSuiteResult } from './benchResult.ts';
import { readWholeFile } from './readWholeFile.ts';
import { ReferenceClient } from './referenceClient.ts';
import { DEFAULT_TIMING, type BaselineReply, type TensorDtype, type TensorFile, type TimingPlan } from './referenceProtocol.ts';
import { MAX_SPREAD } from './timing/measureLaunches.ts';
import { timingSpread } from './timing/timingStats.ts';
import { judgeCase } from './judgeCase.ts';

export type { BenchSuite, CaseContext, OurCaseResult, OwnCheck, SuiteCase } from './benchSuite.ts';

export interface RunSuiteOptions {
  readonly outDir: string;
  /** Scratch space for the case directories (inputs and outputs as files); default `<tmpdir>/tilekit-bench/<suite>`. */
  readonly workDir?: string;
  readonly device: string;
  readonly commit: string;
  readonly torchScript: string;
  readonly python?: string;
  readonly date?: string;
  /** Only the cases whose names contain one of these, or equal one ending in `$` without it (all when absent or empty). */
  readonly only?: readonly string[];
  /**
   * An earlier run of the same suite, commit and device (e.g. one a device call's time limit cut
   * short): its cases are kept, not run again, and the result lists each call's cases (`runs`).
   */
  readonly resume?: BenchSuiteResult;
  readonly log?: (line: string) => void;
}

/** The earlier run's cases by name, after checking that it is the same suite, commit and device. */
function resumedCases(suite: BenchSuite, options: RunSuiteOptions): Map<string, BenchCase> {
  const earlier = options.resume;
  if (earlier === undefined) return new Map();
  for (const [field, want] of [
    ['suite', suite.name],
    ['commit', options.commit],
    ['device', options.device],
  ] as const) {
    if (earlier[field] !== want) throw new ArgumentError(`resume.${field}`, `must be this run's (${want}) to resume it`, earlier[field]);
  }
  return new Map(earlier.cases.map((c) => [c.name, c]));
}

/** The calls of a record: the earlier run's (or one made of its top-level fields), then this one. */
function runParts(earlier: BenchSuiteResult | undefined, now: BenchRunPart): BenchRunPart[] {
  if (earlier === undefined) return [now];
  const before = earlier.runs ?? [
    { date: earlier.date, ...(earlier.provenance ? { provenance: earlier.provenance } : {}), cases: earlier.cases.map((c) => c.name) },
  ];
  return [...before, now];
}

/**
 * Runs a suite beside the torch reference server (one python process): per case the server makes
 * or reads the inputs, times torch and keeps the fp32 reference; ours runs on the same input files;
 * the server measures our outputs' error; validate/ judges it. Writes `<outDir>/<suite>.json` after
 * every case (with `partial` until every case of the suite is in it; `resume` keeps an earlier run's cases).
 */
export async function runSuite(suite: BenchSuite, options: RunSuiteOptions): Promise<BenchSuiteResult> {
  const log = options.log ?? ((line: string) => console.log(line));
  const workDir = options.workDir ?? join(tmpdir(), 'tilekit-bench', suite.name);
  mkdirSync(workDir, { recursive: true });
  const kept = resumedCases(suite, options);
  const selected = suite.cases.filter(
    (c) => !kept.has(c.name) && (!options.only?.length || options.only.some((part) => caseNameMatches(c.name, part))),
  );
  const client = ReferenceClient.start({ script: options.torchScript, python: options.python, log });
  try {
    const { provenance } = await client.hello();
    const resumed = kept.size > 0 ? `, ${kept.size} kept from the run resumed` : '';
    log(
      `== ${suite.name}: ${selected.length} cases on ${provenance.device} (torch ${provenance.torch}, CUDA ${provenance.cuda}, ` +
        `cuDNN ${provenance.cudnn})${resumed}`,
    );
    const fresh = new Map<string, BenchCase>();
    const generators = new Set<string>(options.resume?.inputs?.generator.split('; ').filter((g) => g.length > 0));
    const date = options.date ?? new Date().toISOString().slice(0, 10);
    // Written after every case (partial until the suite is whole), so a call cut short keeps what it measured.
    const write = (): BenchSuiteResult => {
      const cases = suite.cases.flatMap((c) => fresh.get(c.name) ?? kept.get(c.name) ?? []);
      const now = { date, provenance, cases: [...fresh.keys()] };
      const result = parseBenchResult({
        suite: suite.name,
        device: options.device,
        date,
        commit: options.commit,
        ...(cases.length < suite.cases.length ? { partial: true } : {}),
        provenance,
        ...(options.resume === undefined ? {} : { runs: runParts(options.resume, now) }),
        inputs: { generator: [...generators].join('; ') },
        timing: DEFAULT_TIMING,
        cases,
      });
      writeFileSync(join(options.outDir, `${suite.name}.json`), `${JSON.stringify(result, null, 2)}\n`);
      return result;
    };
    for (const [i, c] of selected.entries()) {
      const { record, generator } = await runCase(suite, c, client, join(workDir, c.name), log);
      fresh.set(c.name, record);
      generators.add(generator);
      write();
      log(`[${i + 1}/${selected.length}] ${progressLine(record)}`);
    }
    return write();
  } finally {
    suite.dispose?.();
    await client.close();
  }
}

async function runCase(
  suite: BenchSuite,
  c: SuiteCase,
  client: ReferenceClient,
  dir: string,
  log: (line: string) => void,
): Promise<{ record: BenchCase; generator: string }> {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  try {
    const timing = c.timing ?? DEFAULT_TIMING;
    const inputs = suite.writeInputs?.(c, dir) ?? { source: 'normal' as const, seed: c.seed };
    const prepared = await client.prepare({ case: c.name, op: c.reference.op, params: c.reference.params, dir, inputs, timing });
    const mine = await suite.runOurs(c, caseContext(dir, prepared.inputs.tensors, timing, prepared.baselines, log));
    const checked = await client.check({
      case: c.name,
      outputs: mine.outputs,
      ...(mine.aux === undefined ? {} : { aux: mine.aux }),
      ...(mine.checkOptions === undefined ? {} : { options: mine.checkOptions }),
    });
    const { baselines: baselineVerdicts, ...judged } = judgeCase(c, prepared, checked);
    const validation = withOwnChecks(judged, mine.checks);
    const torchBaselines = Object.fromEntries(
      Object.entries(prepared.baselines).map(([name, b]) => [
        name,
        name in baselineVerdicts ? { ...b, valid: baselineVerdicts[name]! } : b,
      ]),
    );
    const { msMin, msMax, ms } = mine.ours;
    const spread = msMin === undefined || msMax === undefined ? undefined : timingSpread({ ms, msMin, msMax });
    const record: BenchCase = {
      name: c.name,
      params: { ...c.params, seed: prepared.inputs.seed },
      ours: mine.ours,
      baselines: { ...mine.baselines, ...torchBaselines },
      valid: validation.valid,
      maxAbsErr: Math.max(0, ...Object.values(checked.errors).map((e) => e.maxAbs)),
      validation,
      ...(mine.checks === undefined ? {} : { checks: mine.checks }),
      ...(spread === undefined ? {} : { spread, noisy: spread > MAX_SPREAD }),
      ...(checked.excused === undefined ? {} : { excused: checked.excused }),
      ...(mine.note === undefined ? {} : { note: mine.note }),
    };
    // The generator once per suite: each case's seed is in its params.
    return {
      record,
      generator: prepared.inputs.generator.replaceAll(`manual_seed(${prepared.inputs.seed})`, 'manual_seed(<params.seed>)'),
    };
  } catch (error) {
    throw new Error(`${suite.name} case ${c.name}: ${(error as Error).message}`, { cause: error });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The server's verdict with our own checks (OurCaseResult.checks) folded in: valid only when every
 * check holds too; one summary line per check (`name ok|FAIL detail`).
 */
export function withOwnChecks<V extends { readonly valid: boolean; readonly summary: string }>(
  verdict: V,
  checks: Readonly<Record<string, OwnCheck>> | undefined,
): V {
  if (checks === undefined) return verdict;
  const entries = Object.entries(checks);
  const lines = entries.map(([name, check]) => `${name} ${check.ok ? 'ok' : 'FAIL'} ${check.detail}`);
  return {
    ...verdict,
    valid: verdict.valid && entries.every(([, check]) => check.ok),
    summary: [verdict.summary, ...lines].join('\n'),
  };
}

function caseContext(
  dir: string,
  inputs: Readonly<Record<string, TensorFile>>,
  timing: TimingPlan,
  baselines: Readonly<Record<string, BaselineReply>>,
  log: (line: string) => void,
): CaseContext {
  return {
    dir,
    inputs,
    timing,
    baselines,
    readInput(name: string): Uint8Array {
      const file = inputs[name];
      if (file === undefined) throw new Error(`input ${name} is not among the case's inputs (${Object.keys(inputs).join(', ')})`);
      return readWholeFile(join(dir, file.file));
    },
    writeTensor(name: string, dtype: TensorDtype, shape: readonly number[], data: ArrayBufferView): TensorFile {
      const file = `ours.${name}.bin`;
      writeFileSync(join(dir, file), new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
      return { file, dtype, shape: [...shape] };
    },
    log,
  };
}

function progressLine(c: BenchCase): string {
  const hbm = c.ours.hbmFraction === undefined ? '' : ` (${(100 * c.ours.hbmFraction).toFixed(1)}% of the HBM read bandwidth)`;
  const value =
    c.ours.tflops !== undefined
      ? `, ${c.ours.tflops.toFixed(1)} TFLOP/s`
      : c.ours.gbps !== undefined
        ? `, ${c.ours.gbps.toFixed(0)} GB/s`
        : '';
  const figure = `${value}${hbm}`;
  const spread = c.spread === undefined ? '' : `, spread ${(100 * c.spread).toFixed(1)}%${c.noisy ? ' (NOISY)' : ''}`;
  return `${c.name}: ours ${c.ours.ms.toFixed(4)} ms${figure}${spread}, valid=${c.valid}${c.valid ? '' : ` — ${c.validation?.summary ?? ''}`}`;
}

/** `--only` matching: a part ending in `$` names a case exactly (without the `$`), any other part is a substring of its name. */
export function caseNameMatches(name: string, part: string): boolean {
  return part.endsWith('$') ? name === part.slice(0, -1) : name.includes(part);
}
