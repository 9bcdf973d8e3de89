import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toolAvailable } from '../testing/compileAndRunHost.ts';
import { setMaxNRegBudgetProblem, setMaxNRegLaunchRegisters } from './setMaxNRegBudget.ts';

const nvcc = process.env['TILEKIT_NVCC'] ?? 'nvcc';
const hasNvcc = toolAvailable(nvcc);
if (!hasNvcc)
  console.warn(`\n!!! SKIPPING the setmaxnreg launch-register check against ptxas: "${nvcc}" not found (set TILEKIT_NVCC). !!!\n`);

/** ptxas's register count of a warp-specialized kernel: `threads` under __launch_bounds__(threads, 1), the last 128 the producer. */
function ptxasRegisters(threads: number, pr: number, cr: number): number {
  const dir = mkdtempSync(join(tmpdir(), 'tilekit-setmaxnreg-'));
  try {
    const file = join(dir, 'k.cu');
    writeFileSync(
      file,
      [
        `extern "C" __global__ void __launch_bounds__(${threads}, 1) k(float* out) {`,
        `  if (threadIdx.x >= ${threads - 128}) { asm volatile("setmaxnreg.dec.sync.aligned.u32 ${pr};"); }`,
        `  else { asm volatile("setmaxnreg.inc.sync.aligned.u32 ${cr};"); out[threadIdx.x] = 1.f; }`,
        '}',
      ].join('\n'),
    );
    const res = spawnSync(nvcc, ['-arch=sm_90a', '-cubin', '-Xptxas', '-v', '-o', join(dir, 'k.cubin'), file], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    const used = /Used (\d+) registers/.exec(res.stderr);
    if (res.status !== 0 || used === null) throw new Error(`nvcc failed: ${res.stderr}${res.error?.message ?? ''}`);
    return Number(used[1]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('setmaxnreg budgets', () => {
  it.runIf(hasNvcc)('the launch registers are what ptxas gives (256, 384, 512, 640 threads; budgets below and above the cap)', () => {
    for (const [threads, pr, cr] of [
      [256, 40, 232],
      [256, 24, 256],
      [384, 40, 232],
      [384, 24, 160],
      [512, 24, 160],
      [640, 24, 240],
    ] as const)
      expect(ptxasRegisters(threads, pr, cr), `${threads} threads, ${pr}/${cr}`).toBe(setMaxNRegLaunchRegisters(threads, Math.max(pr, cr)));
  });

  it('golden splits: the catalogs’ 24/240 and 40/232 at 384 threads pass; 32/240 (hung on an H200) and 48/232 fail', () => {
    const at = (threads: number, producerRegisters: number, consumerRegisters: number) =>
      setMaxNRegBudgetProblem({ threads, producerThreads: 128, producerRegisters, consumerRegisters });
    expect(at(384, 24, 240)).toBeUndefined();
    expect(at(384, 40, 232)).toBeUndefined();
    expect(at(384, 32, 240)).toMatch(/\(168 − 32\)·128 ≥ \(240 − 168\)·256/);
    expect(at(384, 48, 232)).toMatch(/must come out of the producer's release/);
    expect(at(256, 40, 232)).toBeUndefined();
    expect(at(512, 24, 240)).toMatch(/\(128 − 24\)·128 ≥ \(240 − 128\)·384/);
    expect(at(640, 24, 96)).toBeUndefined();
    expect(at(384, 176, 160)).toMatch(/exceeds the 168 registers/);
  });

  it('a sound split never asks for more than the launch gave the block (property)', () => {
    const budget = fc.integer({ min: 3, max: 32 }).map((x) => x * 8);
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 8 }), budget, budget, (groups, pr, cr) => {
        const threads = groups * 128;
        const launch = Math.ceil(setMaxNRegLaunchRegisters(threads, Math.max(pr, cr)) / 8) * 8;
        const sound =
          setMaxNRegBudgetProblem({ threads, producerThreads: 128, producerRegisters: pr, consumerRegisters: cr }) === undefined;
        expect(sound).toBe(pr <= launch && pr * 128 + cr * (threads - 128) <= launch * threads);
        if (sound) expect(pr * 128 + cr * (threads - 128)).toBeLessThanOrEqual(65536);
      }),
    );
  });
});
