// The dsa suite's contract with the real reference server, end to end through runSuite on a tiny prefill:
// torch_reference.py on the CPU draws the inputs and times torch-gather; kernels/dsa's CPU reference stands in
// for the kernel and goes through the suite's own reader, result writer and sampled check. Runs only where a
// python with torch is at hand (TILEKIT_TORCH_PYTHON, default python3); skipped otherwise (the GPU run of the
// suite covers the same on the device).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { dsaSparseMlaPrefillReference } from '@tilekit/kernel-dsa';
import { afterAll, describe, expect, it } from 'vitest';
import type { BenchSuite, CaseContext, OurCaseResult } from '../benchSuite.ts';
import { runSuite } from '../runSuite.ts';
import { dsaMlaResult, readDsaMlaPrefillHost, validEntries } from './dsa.ts';
import { dsaMeasurement } from './dsaMeasurement.ts';
import { dsaMlaFlops, dsaMlaSpecOf, dsaMlaSuiteCase } from './dsaCases.ts';
import { dsaMlaSubproblem } from './dsaMlaSample.ts';

const python = process.env['TILEKIT_TORCH_PYTHON'] ?? 'python3';
const hasTorch = spawnSync(python, ['-c', 'import torch, numpy'], { stdio: 'ignore' }).status === 0;
if (!hasTorch)
  console.warn(
    `\n!!! SKIPPING the dsa suite's CPU run through torch_reference.py: "${python}" has no torch (set TILEKIT_TORCH_PYTHON). ` +
      `The suite's file contract with the reference server is NOT being exercised. !!!\n`,
  );
const SERVER = resolve(import.meta.dirname, '../../python/torch_reference.py');
const TINY_TIMING = { warmup: 1, warmupMs: 0, repetitions: 3, targetMs: 1, minLaunches: 2, maxLaunches: 4, flushL2: false };
const TIMING = { ms: 2, msMin: 1.9, msMax: 2.1, reps: [1.9, 2, 2.1], launchesPerRep: 2, reruns: 0 };

/** float32 values rounded to bf16 bit patterns (nearest even), as the kernel stores out. */
function bf16Round(values: Float32Array): Uint16Array {
  const words = new Uint32Array(Float32Array.from(values).buffer);
  return Uint16Array.from(words, (w) => (w + 0x7fff + ((w >>> 16) & 1)) >>> 16);
}

/** Ours: the CPU reference of the whole case (query 5's first token dropped when `dropToken`). */
function cpuPrefill(ctx: CaseContext, dropToken: boolean, c = tinyCase()): OurCaseResult {
  const spec = dsaMlaSpecOf(c);
  if (spec.mode !== 'prefill') throw new Error(`${c.name} is not a prefill case`);
  const host = readDsaMlaPrefillHost(ctx, spec);
  const queries = Array.from({ length: spec.sQ }, (_, t) => t);
  const x = dsaMlaSubproblem(host, queries);
  const indices = Int32Array.from(x.indices);
  if (dropToken) indices[5 * spec.topk] = -1;
  const r = dsaSparseMlaPrefillReference({ ...x, indices });
  const flops = dsaMlaFlops(validEntries(host), spec.hQ);
  return { ours: dsaMeasurement(TIMING, 'cpu reference', flops), ...dsaMlaResult(ctx, host, { ...r, out: bf16Round(r.out) }) };
}

function tinyCase() {
  return { ...dsaMlaSuiteCase({ mode: 'prefill', sQ: 6, L: 300, hQ: 64, topk: 40 }), timing: TINY_TIMING };
}

function cpuSuite(dropToken: boolean): BenchSuite {
  return { name: 'dsa', cases: [tinyCase()], runOurs: async (_c, ctx) => cpuPrefill(ctx, dropToken) };
}

describe.skipIf(!hasTorch)('dsa through runSuite with torch_reference.py on the CPU', async () => {
  const out = mkdtempSync(join(tmpdir(), 'tilekit-dsa-mla-torch-'));
  afterAll(() => rmSync(out, { recursive: true, force: true }));
  const saved = process.env['TILEKIT_REFERENCE_DEVICE'];
  process.env['TILEKIT_REFERENCE_DEVICE'] = 'cpu';
  const options = { workDir: join(out, 'work'), device: 'cpu', commit: 'c', torchScript: SERVER, python, log: () => {} };
  try {
    const right = hasTorch ? await runSuite(cpuSuite(false), { ...options, outDir: mkdtempSync(join(out, 'right-')) }) : undefined;
    const wrong = hasTorch ? await runSuite(cpuSuite(true), { ...options, outDir: mkdtempSync(join(out, 'wrong-')) }) : undefined;

    it("the CPU reference passes the server's check (against torch-gather) and the sampled check; TFLOP/s by FlashMLA's count", () => {
      const c = right!.cases[0]!;
      expect(c.valid, c.validation?.summary).toBe(true);
      expect(c.validation?.against).toBe('torch-gather');
      expect(Object.keys(c.validation?.outputs ?? {})).toEqual(['out', 'lse']);
      expect(c.checks?.['sampled queries']?.ok).toBe(true);
      expect(c.ours.tflops).toBeCloseTo((2 * 6 * 40 * 64 * 1088) / 2 / 1e9, 12);
      expect(c.params).toMatchObject({ mode: 'prefill', b: 1, s_q: 6, L: 300, h_q: 64, topk: 40 });
      expect(c.baselines['torch-gather']).toMatchObject({ form: expect.stringMatching(/^index_select gather/) });
      expect(right!.inputs?.generator).toMatch(/^dsa mla: torch .*\.manual_seed\(<params\.seed>\)/);
    });

    it("a dropped token fails the server's check and ours", () => {
      const c = wrong!.cases[0]!;
      expect(c.valid).toBe(false);
      expect(c.validation?.outputs['out']?.ok).toBe(false);
      expect(c.checks?.['sampled queries']?.ok).toBe(false);
    });
  } finally {
    if (saved === undefined) delete process.env['TILEKIT_REFERENCE_DEVICE'];
    else process.env['TILEKIT_REFERENCE_DEVICE'] = saved;
  }
});
