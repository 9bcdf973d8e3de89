// The provenance line under a suite's README table: where, when and at which commit it was
// measured, with the software and clock figures the result records (nothing is shown that it lacks).
import type { BenchSuiteResult } from './benchResult.ts';
import { inputsOf, provenanceOf } from './resultExtras.ts';

/**
 * A commit as the README shows it: a hash cut to 7 characters, keeping a suffix such as
 * `+uncommitted`; anything else (`unknown`) as recorded.
 */
export function shortCommit(commit: string): string {
  const match = /^([0-9a-f]{7,40})(.*)$/i.exec(commit);
  return match === null ? commit : `${match[1]!.slice(0, 7)}${match[2]!}`;
}

/** "torch 2.5.1, CUDA 12.4, cuDNN 90100", the versions that are recorded; undefined when none is. */
function softwareOf(result: BenchSuiteResult): string | undefined {
  const p = provenanceOf(result);
  const parts = [
    p.torch === undefined ? undefined : `torch ${p.torch}`,
    p.cuda === undefined ? undefined : `CUDA ${p.cuda}`,
    p.cudnn === undefined ? undefined : `cuDNN ${p.cudnn}`,
  ].filter((s) => s !== undefined);
  return parts.length === 0 ? undefined : parts.join(', ');
}

/** "SM clock 1755 MHz (max 1980)", or the maximum alone; undefined when neither is recorded. */
function smClockOf(current: number | undefined, max: number | undefined): string | undefined {
  if (current !== undefined) return `SM clock ${current} MHz${max === undefined ? '' : ` (max ${max})`}`;
  return max === undefined ? undefined : `SM clock max ${max} MHz`;
}

/** "driver 580.95, SM clock 1755 MHz (max 1980), power limit 700 W", what is recorded; undefined when none is. */
function cardStateOf(result: BenchSuiteResult): string | undefined {
  const p = provenanceOf(result);
  const parts = [
    p.driver === undefined ? undefined : `driver ${p.driver}`,
    smClockOf(p.smClockMHz, p.smClockMaxMHz),
    p.powerLimitW === undefined ? undefined : `power limit ${p.powerLimitW} W`,
  ].filter((s) => s !== undefined);
  return parts.length === 0 ? undefined : parts.join(', ');
}

/** "inputs: randn-fp32, seed 7" when the result names its generator (and seed). */
function inputsLine(result: BenchSuiteResult): string | undefined {
  const { generator, seed } = inputsOf(result);
  if (generator === undefined) return seed === undefined ? undefined : `inputs: seed ${seed}`;
  return `inputs: ${generator}${seed === undefined ? '' : `, seed ${seed}`}`;
}

/** One line: device, date, short commit, then software versions, card state and inputs where recorded. */
export function formatProvenanceLine(result: BenchSuiteResult): string {
  const parts = [
    result.device,
    result.date,
    `commit \`${shortCommit(result.commit)}\``,
    softwareOf(result),
    cardStateOf(result),
    inputsLine(result),
  ].filter((s) => s !== undefined);
  return parts.join(' · ');
}
