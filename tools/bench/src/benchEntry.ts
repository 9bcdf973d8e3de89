// The body every `*.bench.ts` entry shares (bundled by tools/device/pack.mjs as
// .device/bench-<name>.mjs and run on the GPU machine by run-on-gpu.sh): read `--out` / `--torch`,
// take the commit from the pack manifest, run the suite, print each case against its baselines, and
// exit non-zero when any case failed validation.
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { runCommand } from '@tilekit/host';
import { Device } from '@tilekit/runtime';
import { formatTime, hasAnyFigure, isBaselineError, suiteMetric, type BenchCase, type Metric } from './benchResult.ts';
import { readBenchResult } from './readmeResults.ts';
import { runSuite, type BenchSuite } from './runSuite.ts';

/** A baseline a bench entry prints our ratio against: its key in the result, and how to call it. */
export interface EntryBaseline {
  readonly key: string;
  readonly label: string;
}

/**
 * The commit the packed tree came from (`.device/manifest.json` under `root`), `+uncommitted` when
 * the tree was dirty, `unknown` without a manifest.
 */
export function packedCommit(root: string): string {
  const manifestPath = join(root, '.device', 'manifest.json');
  const manifest = existsSync(manifestPath) ? (JSON.parse(readFileSync(manifestPath, 'utf8')) as { commit?: string; dirty?: boolean }) : {};
  return `${manifest.commit ?? 'unknown'}${manifest.dirty ? '+uncommitted' : ''}`;
}

/**
 * One line per case: our figure (TFLOP/s or GB/s, as `metric`) and its ratio to each baseline
 * (`n/a` where the baseline has no such figure, e.g. it errored), then whether it validated.
 */
export function formatEntryCase(c: BenchCase, metric: Metric, baselines: readonly EntryBaseline[]): string {
  if (!hasAnyFigure(c)) return formatTimedEntryCase(c, baselines);
  const ours = c.ours[metric];
  const ratios = baselines.map(({ key, label }) => {
    const base = c.baselines[key];
    const theirs = base !== undefined && metric in base ? (base as Record<Metric, number | undefined>)[metric] : undefined;
    return theirs !== undefined && ours !== undefined ? `${(ours / theirs).toFixed(3)} of ${label}` : `${label} n/a`;
  });
  const figure = metric === 'tflops' ? `${ours?.toFixed(1)} TFLOP/s` : `${ours?.toFixed(0)} GB/s`;
  return `${c.name}: ours ${figure} = ${ratios.join(', ')}; valid ${c.valid}`;
}

/** A case timed without a figure (dsa's decode step): our time and each baseline's time over ours. */
function formatTimedEntryCase(c: BenchCase, baselines: readonly EntryBaseline[]): string {
  const ratios = baselines.map(({ key, label }) => {
    const base = c.baselines[key];
    return base === undefined || isBaselineError(base) ? `${label} n/a` : `${(base.ms / c.ours.ms).toFixed(2)}× faster than ${label}`;
  });
  return `${c.name}: ours ${formatTime(c.ours.ms)} = ${ratios.join(', ')}; valid ${c.valid}`;
}

const USAGE = 'usage: node .device/bench-<suite>.mjs [--out DIR] [--work DIR] [--torch SCRIPT] [--only NAME[,NAME…]] [--resume FILE]';

/**
 * Runs a suite as a bench entry: `--out DIR` (default .device/out) receives `<suite>.json`,
 * `--work DIR` holds the case files while a case runs (default under the OS temp dir), `--only` keeps the
 * cases whose names contain one of the comma-separated parts (a part ending in `$`: exactly that name),
 * `--resume FILE` keeps the cases of an earlier run of the
 * same suite, commit and device (a partial `<suite>.json`) and runs the rest, `--torch` overrides the reference script,
 * `--help` prints the usage; prints `formatEntryCase` per
 * case. The command line is read before `makeSuite` opens the device, and errors follow the CLI
 * contract (`runCommand`): an unknown option or a missing device is one line on stderr and exit 2.
 * Returns (and sets) the exit code: 0 when every case validated, 1 when any did not.
 */
export function runBenchEntry(
  makeSuite: () => BenchSuite,
  baselines: readonly EntryBaseline[],
  argv: readonly string[] = process.argv.slice(2),
): Promise<number> {
  return runCommand(async (io) => {
    const { values } = parseArgs({
      args: [...argv],
      options: {
        out: { type: 'string' },
        work: { type: 'string' },
        torch: { type: 'string' },
        only: { type: 'string' },
        resume: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
    if (values.help === true) return void io.stdout(`${USAGE}\n`);
    const root = process.cwd();
    // Read before the device is opened: a bad file is one line and exit 2.
    const resume = values.resume === undefined ? undefined : readBenchResult(resolve(values.resume));
    const result = await runSuite(makeSuite(), {
      ...(resume === undefined ? {} : { resume }),
      outDir: resolve(values.out ?? join(root, '.device', 'out')),
      ...(values.work === undefined ? {} : { workDir: resolve(values.work) }),
      only: values.only?.split(',').filter((part) => part.length > 0) ?? [],
      device: Device.open(0).name,
      commit: packedCommit(root),
      torchScript: values.torch ?? join(root, 'tools', 'bench', 'python', 'torch_reference.py'),
    });
    const metric = suiteMetric(result);
    for (const c of result.cases) io.stdout(`${formatEntryCase(c, metric, baselines)}\n`);
    return result.cases.every((c) => c.valid) ? 0 : 1;
  });
}
