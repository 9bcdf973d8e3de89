// The dsa-indexer suite's contract with the real reference server, end to end through runSuite on tiny
// cases: torch_reference.py on the CPU draws the inputs and times torch; the CPU references of
// kernels/dsa stand in for the kernels and go through the suite's own readers, checks and writers. Runs
// only where a python with torch is at hand (TILEKIT_TORCH_PYTHON, default python3); skipped otherwise
// (CI has no torch; the GPU run of the suite covers the same on the device).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { dsaIndexerDecodeReference, dsaIndexerPrefillReference } from '@tilekit/kernel-dsa';
import { afterAll, describe, expect, it } from 'vitest';
import type { BenchSuite, CaseContext, OurCaseResult, SuiteCase } from '../benchSuite.ts';
import { runSuite } from '../runSuite.ts';
import { readFileChunks } from './dsaCaseFiles.ts';
import { decodeLogitsCheck, readDecodeHost, readPrefillHost, selectionOutputs, writePrefillLogits } from './dsaIndexer.ts';
import {
  dsaBenchSpecOf,
  dsaBenchSuiteCase,
  dsaDecodeRows,
  hbmFractionOf,
  type DsaDecodeBenchSpec,
  type DsaPrefillBenchSpec,
} from './dsaIndexerCases.ts';
import { dsaPrefillLogitsCheck, dsaPrefillSample } from './dsaLogitsSample.ts';
import { dsaTopkSelect } from './dsaTopkCheck.ts';
import { readCaseInput } from './readCaseInput.ts';

const python = process.env['TILEKIT_TORCH_PYTHON'] ?? 'python3';
const hasTorch = spawnSync(python, ['-c', 'import torch, numpy'], { stdio: 'ignore' }).status === 0;
if (!hasTorch)
  console.warn(
    `\n!!! SKIPPING the dsa-indexer suite's CPU run through torch_reference.py: "${python}" has no torch (set TILEKIT_TORCH_PYTHON). ` +
      `The suite's file contract with the reference server is NOT being exercised. !!!\n`,
  );
const SERVER = resolve(import.meta.dirname, '../../python/torch_reference.py');
const TINY_TIMING = { warmup: 1, warmupMs: 0, repetitions: 3, targetMs: 1, minLaunches: 2, maxLaunches: 4, flushL2: false };

/** Tiny cases of every kind: decode b 2 × L 256 (k 16) in its three stages, prefill s 40 × L 256; hbm-read of 1 MiB. */
function tinyCases(): SuiteCase[] {
  const decode = (['indexer', 'topk', 'fused'] as const).map((stage) =>
    dsaBenchSuiteCase({ mode: 'decode', stage, b: 2, L: 256, h: 64, nextN: 1, k: 16 }),
  );
  const prefill = dsaBenchSuiteCase({ mode: 'prefill', stage: 'indexer', s: 40, L: 256, h: 64 });
  return [...decode, prefill].map((c) => ({
    ...c,
    reference: {
      ...c.reference,
      params: { ...c.reference.params, ...('hbm_read_bytes' in c.reference.params ? { hbm_read_bytes: 1 << 20 } : {}) },
    },
    timing: TINY_TIMING,
  }));
}

const fake = (gbps: number) => ({ ms: 1, msMin: 1, msMax: 1, reps: [1, 1, 1], launchesPerRep: 2, gbps, instance: 'cpu reference' });

/** Ours: the CPU reference logits (one key tile zeroed when `dropTile`), selections by the exact rule. */
function decodeCase(spec: DsaDecodeBenchSpec, ctx: CaseContext, dropTile: boolean): OurCaseResult {
  const rows = dsaDecodeRows(spec);
  if (spec.stage === 'topk') {
    const logits = new Float32Array(new Uint8Array(readCaseInput(ctx, 'logits', 'fp32', [rows, spec.L])).buffer);
    const { values, check } = selectionOutputs(ctx, logits, rows, spec.L, spec.k, dsaTopkSelect(logits, rows, spec.L, spec.k));
    return { ours: fake(1), outputs: { topk_values: values }, checks: { 'exact selection': check } };
  }
  const x = readDecodeHost(ctx, spec);
  const cache = new Uint8Array(x.cacheBytes);
  readFileChunks(x.cachePath, x.cacheBytes, (chunk, offset) => cache.set(chunk, offset), 10000);
  const logits = dsaIndexerDecodeReference({ ...x.host, cache });
  if (dropTile) logits.fill(0, spec.L - 64, spec.L);
  const checks = { 'logits sample': decodeLogitsCheck(x, logits) };
  const outputs = { logits: ctx.writeTensor('logits', 'fp32', [rows, spec.L], logits) };
  const hbmFraction = hbmFractionOf(2, ctx.baselines);
  const ours = hbmFraction === undefined ? fake(2) : { ...fake(2), hbmFraction };
  if (spec.stage === 'indexer') return { ours, outputs, checks };
  const { values, check } = selectionOutputs(ctx, logits, rows, spec.L, spec.k, dsaTopkSelect(logits, rows, spec.L, spec.k));
  return { ours, outputs: { ...outputs, topk_values: values }, checks: { ...checks, 'exact selection': check } };
}

function prefillCase(spec: DsaPrefillBenchSpec, ctx: CaseContext, dropTile: boolean): OurCaseResult {
  const host = readPrefillHost(ctx, spec);
  const logits = dsaIndexerPrefillReference(host);
  if (dropTile) logits.fill(0, spec.L * 39, spec.L * 39 + 64);
  const bytes = new Uint8Array(logits.buffer);
  const sample = dsaPrefillSample(host);
  const { file, kept } = writePrefillLogits(ctx, spec, sample.rows, (chunk, offset) =>
    chunk.set(bytes.subarray(offset, offset + chunk.length)),
  );
  return {
    ours: { ...fake(3), tflops: 1 },
    outputs: { logits: file },
    checks: { 'logits sample': dsaPrefillLogitsCheck(host, sample, kept) },
  };
}

function cpuSuite(dropTile: boolean): BenchSuite {
  return {
    name: 'dsa-indexer',
    cases: tinyCases(),
    runOurs: async (c, ctx) => {
      const spec = dsaBenchSpecOf(c);
      return spec.mode === 'prefill' ? prefillCase(spec, ctx, dropTile) : decodeCase(spec, ctx, dropTile);
    },
  };
}

describe.skipIf(!hasTorch)('dsa-indexer through runSuite with torch_reference.py on the CPU', async () => {
  const out = mkdtempSync(join(tmpdir(), 'tilekit-dsa-torch-'));
  afterAll(() => rmSync(out, { recursive: true, force: true }));
  const saved = process.env['TILEKIT_REFERENCE_DEVICE'];
  process.env['TILEKIT_REFERENCE_DEVICE'] = 'cpu';
  const options = { workDir: join(out, 'work'), device: 'cpu', commit: 'c', torchScript: SERVER, python, log: () => {} };
  try {
    const right = hasTorch ? await runSuite(cpuSuite(false), { ...options, outDir: mkdtempSync(join(out, 'right-')) }) : undefined;
    const wrong = hasTorch ? await runSuite(cpuSuite(true), { ...options, outDir: mkdtempSync(join(out, 'wrong-')) }) : undefined;

    it("the CPU references pass the server's check and our own, judged against torch-bf16 or torch.topk", () => {
      for (const c of right!.cases) {
        expect(c.valid, `${c.name}: ${c.validation?.summary}`).toBe(true);
        expect(c.validation?.against).toBe(c.params['stage'] === 'topk' ? 'torch-topk' : 'torch-bf16');
        expect(Object.values(c.checks ?? {}).every((check) => check.ok)).toBe(true);
      }
      expect(right!.cases.map((c) => Object.keys(c.checks ?? {}))).toEqual([
        ['logits sample'],
        ['exact selection'],
        ['logits sample', 'exact selection'],
        ['logits sample'],
      ]);
    });

    it("the topk stage's values equal torch.topk's exactly; hbm-read gives the indexer stage its hbmFraction", () => {
      expect(right!.cases[1]!.validation?.outputs['topk_values']?.ours).toEqual({ maxAbs: 0, rms: 0 });
      expect(right!.cases[0]!.baselines['hbm-read']).toMatchObject({ form: 'torch.sum over a 0.000976562 GiB fp32 tensor' });
      expect(right!.cases[0]!.ours.hbmFraction).toBeGreaterThan(0);
      expect(right!.inputs?.generator).toMatch(/^dsa: torch .*\.manual_seed\(<params\.seed>\)/);
    });

    it('a dropped key tile fails both checks in every indexer case; the topk stage is not affected', () => {
      expect(wrong!.cases.map((c) => c.valid)).toEqual([false, true, false, false]);
      for (const i of [0, 2, 3]) {
        const c = wrong!.cases[i]!;
        expect(c.validation?.outputs['logits']?.ok, c.name).toBe(false);
        expect(c.checks?.['logits sample']?.ok, c.name).toBe(false);
      }
    });
  } finally {
    if (saved === undefined) delete process.env['TILEKIT_REFERENCE_DEVICE'];
    else process.env['TILEKIT_REFERENCE_DEVICE'] = saved;
  }
});
