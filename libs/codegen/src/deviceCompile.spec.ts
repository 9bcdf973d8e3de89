// Emitted device code must compile: sm_90a with nvcc (to a cubin), gfx942 with clang-19 as
// header-less HIP. No GPU is needed. A missing compiler skips its test LOUDLY, never silently.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sm80, sm90a } from './cudaTarget.ts';
import { gfx942 } from './hipTarget.ts';
import type { Target } from './target.ts';
import { toolAvailable } from './testing/compileAndRunHost.ts';
import { sampleKernelsSource } from './testing/samples.ts';

const nvcc = process.env['TILEKIT_NVCC'] ?? 'nvcc';
const hasNvcc = toolAvailable(nvcc);
const clangCandidates = [process.env['TILEKIT_CLANG'], 'clang-19', '/usr/lib/llvm-19/bin/clang-19'].filter(
  (c): c is string => c !== undefined,
);
const clang = clangCandidates.find((c) => toolAvailable(c));

if (!hasNvcc)
  console.warn(`\n!!! SKIPPING the nvcc compile test: "${nvcc}" not found (set TILEKIT_NVCC). Emitted CUDA is NOT being compiled. !!!\n`);
if (clang === undefined) {
  console.warn(
    `\n!!! SKIPPING the HIP compile test: none of ${clangCandidates.join(', ')} runs (set TILEKIT_CLANG). Emitted HIP is NOT being compiled. !!!\n`,
  );
}

/** Compile `source` in a fresh temp dir; returns the output's size or throws with the log and source. */
function compile(target: Target, source: string, command: (file: string, out: string) => [string, string[]]): number {
  const dir = mkdtempSync(join(tmpdir(), `tilekit-${target.name}-`));
  try {
    const file = join(dir, target.language === 'hip' ? 'kernels.hip' : 'kernels.cu');
    const out = join(dir, 'kernels.out');
    writeFileSync(file, source);
    const [exe, args] = command(file, out);
    const res = spawnSync(exe, args, { encoding: 'utf8', timeout: 300_000 });
    if (res.status !== 0) {
      const numbered = source
        .split('\n')
        .map((l, i) => `${String(i + 1).padStart(4)}| ${l}`)
        .join('\n');
      throw new Error(`${exe} ${args.join(' ')} failed:\n${res.stderr}${res.error?.message ?? ''}\n${numbered}`);
    }
    return existsSync(out) ? statSync(out).size : 0;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('emitted device code compiles', () => {
  it.skipIf(!hasNvcc)('sm_90a and sm_80 sample kernels compile with nvcc to cubins', () => {
    for (const target of [sm90a, sm80]) {
      const size = compile(target, sampleKernelsSource(target), (file, out) => [
        nvcc,
        [`-arch=${target.arch as string}`, '-cubin', '-std=c++17', '-Werror', 'all-warnings', '-o', out, file],
      ]);
      expect(size).toBeGreaterThan(0);
    }
  });

  it.skipIf(clang === undefined)('gfx942 sample kernels compile as header-less HIP with clang (-nogpuinc)', () => {
    const size = compile(gfx942, sampleKernelsSource(gfx942), (file, out) => [
      clang as string,
      [
        '-x',
        'hip',
        `--offload-arch=${gfx942.arch as string}`,
        '-nogpulib',
        '-nogpuinc',
        '--cuda-device-only',
        '-std=c++17',
        '-O1',
        '-Wall',
        '-Werror',
        '-S',
        '-o',
        out,
        file,
      ],
    ]);
    expect(size).toBeGreaterThan(0);
  });
});
