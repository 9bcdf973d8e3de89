import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseBenchResult, type BaselineMeasurement, type BenchCase, type BenchSuiteResult, type OurMeasurement } from './benchResult.ts';

/** One case of a suite: our parameters, and what the torch reference script should time for it. */
export interface SuiteCase {
  readonly name: string;
  readonly params: Readonly<Record<string, string | number | boolean>>;
  readonly torch: { readonly op: 'copy' | 'permute' | 'gemm' | 'sdpa_fwd' | 'sdpa_bwd' | 'fmha_fwd'; readonly params: Readonly<Record<string, unknown>> };
}

/** What our side of a case produced: the timing and whether the output was validated. */
export interface OurCaseResult {
  readonly ours: OurMeasurement;
  readonly valid: boolean;
  readonly maxAbsErr?: number;
  readonly note?: string;
  /** References our side measured itself in the same run (e.g. our dense kernel beside a sparse one), listed before torch's. */
  readonly baselines?: Readonly<Record<string, BaselineMeasurement>>;
}

/** A named benchmark suite; operators register one each (tools/bench/src/suites). */
export interface BenchSuite {
  readonly name: string;
  readonly cases: readonly SuiteCase[];
  /** Runs, validates and times our kernel for one case (CUDA events, median of ≥ 20 after warm-up). */
  runOurs(c: SuiteCase): Promise<OurCaseResult>;
  /** Frees whatever the suite holds on the device. */
  dispose?(): void;
}

export interface RunSuiteOptions {
  readonly outDir: string;
  readonly device: string;
  readonly commit: string;
  readonly torchScript: string;
  readonly python?: string;
  readonly date?: string;
  readonly log?: (line: string) => void;
}

/**
 * Runs the torch reference for every case (one python process, before ours, in the same device
 * command), then ours case by case with progress, and writes `<outDir>/<suite>.json`.
 */
export async function runSuite(suite: BenchSuite, options: RunSuiteOptions): Promise<BenchSuiteResult> {
  const log = options.log ?? ((line: string) => console.log(line));
  mkdirSync(options.outDir, { recursive: true });
  const casesPath = join(options.outDir, `${suite.name}.torch-cases.json`);
  const torchPath = join(options.outDir, `${suite.name}.torch.json`);
  writeFileSync(casesPath, JSON.stringify(suite.cases.map((c) => ({ name: c.name, ...c.torch })), null, 1));
  log(`== ${suite.name}: torch reference for ${suite.cases.length} cases`);
  const torchRun = spawnSync(options.python ?? 'python3', [options.torchScript, casesPath, torchPath], {
    stdio: 'inherit',
    env: { ...process.env, PYTHONUNBUFFERED: '1' },
  });
  let torchCases: Record<string, Record<string, BaselineMeasurement>> = {};
  if (torchRun.status === 0) {
    torchCases = (JSON.parse(readFileSync(torchPath, 'utf8')) as { cases: typeof torchCases }).cases;
  } else {
    log(`torch reference failed (exit ${torchRun.status ?? torchRun.signal}): baselines recorded as errors`);
  }
  const cases: BenchCase[] = [];
  for (const [i, c] of suite.cases.entries()) {
    const { baselines: ownBaselines, ...mine } = await suite.runOurs(c);
    const torch = torchCases[c.name] ?? { torch: { error: `torch reference did not run (exit ${torchRun.status})` } };
    const baselines = { ...ownBaselines, ...torch };
    cases.push({ name: c.name, params: c.params, ...mine, baselines });
    const figure = mine.ours.tflops !== undefined ? `${mine.ours.tflops.toFixed(1)} TFLOP/s` : `${mine.ours.gbps?.toFixed(0)} GB/s`;
    log(`[${i + 1}/${suite.cases.length}] ${c.name}: ours ${mine.ours.ms.toFixed(4)} ms, ${figure}, valid=${mine.valid}`);
  }
  suite.dispose?.();
  const result = parseBenchResult({
    suite: suite.name,
    device: options.device,
    date: options.date ?? new Date().toISOString().slice(0, 10),
    commit: options.commit,
    cases,
  });
  writeFileSync(join(options.outDir, `${suite.name}.json`), `${JSON.stringify(result, null, 2)}\n`);
  return result;
}
