// Reads the committed suite results (benchmarks/results/*.json) in the order the README shows them.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ArgumentError } from '@tilekit/numeric';
import { parseBenchResult, type BenchSuiteResult } from './benchResult.ts';

/** The README's order, lowest layer first; a suite not named here follows, by name. */
export const README_SUITE_ORDER: readonly string[] = ['permute', 'gemm', 'fmha-fwd', 'fmha-bwd', 'sparge', 'ffpa', 'dsa-indexer', 'dsa'];

function orderKey(suite: string): number {
  const i = README_SUITE_ORDER.indexOf(suite);
  return i < 0 ? README_SUITE_ORDER.length : i;
}

/** `results` sorted by README_SUITE_ORDER, then by suite name. */
export function inReadmeOrder(results: readonly BenchSuiteResult[]): BenchSuiteResult[] {
  return [...results].sort((a, b) => orderKey(a.suite) - orderKey(b.suite) || a.suite.localeCompare(b.suite));
}

/** One result file, parsed and checked; ArgumentError naming the file when it is not JSON or not a result. */
export function readBenchResult(path: string): BenchSuiteResult {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    if (error instanceof SyntaxError) throw new ArgumentError(path, `is not JSON: ${error.message}`);
    throw error;
  }
  try {
    return parseBenchResult(value);
  } catch (error) {
    if (error instanceof ArgumentError) throw new ArgumentError(path, `is not a bench result: ${error.message}`);
    throw error;
  }
}

/**
 * Every `*.json` in `dir` as a suite result, in README order. Throws ArgumentError naming `dir` when
 * it holds none, and naming a file whose run is partial (resume it first: the README shows whole suites).
 */
export function readBenchResults(dir: string): BenchSuiteResult[] {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith('.json'));
  } catch (error) {
    throw new ArgumentError(dir, `is not a readable folder: ${(error as Error).message}`);
  }
  if (names.length === 0) throw new ArgumentError(dir, 'must hold at least one <suite>.json');
  const results = names.map((n) => {
    const result = readBenchResult(join(dir, n));
    if (result.partial === true)
      throw new ArgumentError(join(dir, n), 'is a partial run (not every case of its suite): resume it with --resume before publishing it');
    return result;
  });
  return inReadmeOrder(results);
}
