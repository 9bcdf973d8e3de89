// Brings README.md's benchmark block in line with the committed results, or says whether it is.
import { readFileSync, writeFileSync } from 'node:fs';
import { ArgumentError } from '@tilekit/numeric';
import { replaceMarkedBlock } from './readmeBlock.ts';
import { readBenchResults } from './readmeResults.ts';
import { formatReadmeBenchTable } from './readmeTable.ts';

/** What a sync found: whether the README's block differed from the generated one, and from how many suites. */
export interface ReadmeSyncResult {
  readonly differs: boolean;
  readonly suites: number;
}

function readReadme(readmePath: string): string {
  try {
    return readFileSync(readmePath, 'utf8');
  } catch (error) {
    throw new ArgumentError(readmePath, `is not a readable file: ${(error as Error).message}`);
  }
}

/**
 * Regenerates the block from every result in `resultsDir` and compares it with `readmePath`'s;
 * with `write`, a README that differs is rewritten (only between the markers).
 */
export function syncReadmeBenchTable(readmePath: string, resultsDir: string, write: boolean): ReadmeSyncResult {
  const results = readBenchResults(resultsDir);
  const text = readReadme(readmePath);
  const updated = replaceMarkedBlock(text, formatReadmeBenchTable(results), readmePath);
  const differs = updated !== text;
  if (differs && write) writeFileSync(readmePath, updated);
  return { differs, suites: results.length };
}
