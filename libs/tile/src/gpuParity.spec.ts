// The CPU half of tile.gpu.spec.ts: the host dialect (g++) of every GPU parity program writes
// exactly the bytes the TS evaluators predict (load/store round trips, shared-memory staging, block
// reductions), the cases cover both cross-thread reduction paths and vector accesses, and the CUDA
// dialect of all of them compiles with nvcc (when present). On the GPU machine the device output is
// then compared byte for byte with this host output.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sm80 } from '@tilekit/codegen';
import { hostCompiler, toolAvailable } from '@tilekit/codegen/testing';
import { describe, expect, it } from 'vitest';
import { cudaParitySource, firstMismatch, gpuParityCases, runParityCasesOnHost } from './testing/gpuParity.ts';

const haveGxx = toolAvailable(hostCompiler());
if (!haveGxx) console.warn(`\n!!! SKIPPING the tile GPU-parity host runs: "${hostCompiler()}" not found. !!!\n`);
const nvcc = process.env['TILEKIT_NVCC'] ?? 'nvcc';
const hasNvcc = toolAvailable(nvcc);
if (!hasNvcc) console.warn(`\n!!! SKIPPING the tile GPU-parity nvcc compile: "${nvcc}" not found. !!!\n`);

describe('GPU parity programs', () => {
  const cases = gpuParityCases();

  it('cover both reduction paths, both element types, a partial warp and host-only (fold-order) cases', () => {
    const steps = cases.flatMap((c) => c.reduceSteps);
    expect(steps.some((s) => s.via === 'lanes')).toBe(true);
    expect(steps.some((s) => s.via === 'shared')).toBe(true);
    expect(steps.some((s) => s.via === 'shared' && (s.length & (s.length - 1)) !== 0)).toBe(true);
    expect(cases.some((c) => c.numThreads % 32 !== 0)).toBe(true);
    expect(new Set(cases.flatMap((c) => c.buffers.map((b) => b.element)))).toEqual(new Set(['f32', 'f16']));
    expect(cases.filter((c) => c.expected === undefined).map((c) => c.name)).toEqual(['red_vec_cols_frac', 'red_irregular_x0_frac']);
    expect(new Set(cases.map((c) => c.name)).size).toBe(cases.length);
  });

  it('the CUDA dialect uses 16-byte fp16 vectors, shuffles, shared memory and barriers', () => {
    const s = cudaParitySource(cases, sm80);
    expect(s).toContain('tk_vec<__half, 8>');
    expect(s).toContain('tk_vec<float, 4>');
    expect(s).toContain('__shfl_xor_sync');
    expect(s).toContain('__syncthreads()');
    for (const c of cases) expect(s).toContain(`extern "C" __global__ void __launch_bounds__(${c.numThreads}) ${c.name}(`);
  });

  it.runIf(haveGxx)('host dialect (g++) equals the TS evaluators byte for byte; fold-order cases are deterministic', () => {
    const got = runParityCasesOnHost(cases);
    cases.forEach((c, i) => {
      const out = got[i]!;
      expect(out.length).toBe(c.buffers.length);
      c.buffers.forEach((b, k) => {
        expect(out[k]!.byteLength, `${c.name}.${b.name}`).toBe(b.init.byteLength);
        if (c.expected !== undefined)
          expect(firstMismatch(b.element, out[k]!, c.expected[k]!), `${c.name}.${b.name}: ${c.what}`).toBeUndefined();
      });
    });
    // Fractional reductions: sums are not the TS (double, X-order) values but both runs agree.
    const again = runParityCasesOnHost(cases.filter((c) => c.expected === undefined));
    cases
      .filter((c) => c.expected === undefined)
      .forEach((c, j) => {
        const i = cases.indexOf(c);
        c.buffers.forEach((b, k) => expect(firstMismatch(b.element, again[j]![k]!, got[i]![k]!), `${c.name}.${b.name}`).toBeUndefined());
      });
  });

  it.runIf(hasNvcc)('the CUDA dialect of every case compiles with nvcc (sm_90a cubin)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tilekit-tile-parity-nvcc-'));
    try {
      const file = join(dir, 'parity.cu');
      const source = cudaParitySource(cases, sm80);
      writeFileSync(file, source);
      const res = spawnSync(nvcc, ['-arch=sm_90a', '-cubin', '-std=c++17', '-O3', '-o', join(dir, 'parity.cubin'), file], {
        encoding: 'utf8',
        timeout: 300_000,
      });
      const numbered = (): string =>
        source
          .split('\n')
          .map((l, i) => `${String(i + 1).padStart(4)}| ${l}`)
          .join('\n');
      expect(res.status, res.status === 0 ? '' : `nvcc failed:\n${res.stderr}${res.error?.message ?? ''}\n${numbered()}`).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
