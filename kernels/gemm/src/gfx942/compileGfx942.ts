// Compiling a gfx942 instance the way CI does: self-contained HIP through Debian's clang-19 (its
// AMDGPU backend, no ROCm headers or device libraries), to assembly whose metadata and comments carry
// the kernel's resources.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TilekitError } from '@tilekit/numeric';
import { parseGfx942Resources, type Gfx942KernelResources } from './gfx942Resources.ts';

/** The flags of every gfx942 compile (-O3, as hipcc's default release build; warnings are errors). */
export const GFX942_CLANG_FLAGS = [
  '-x',
  'hip',
  '--offload-arch=gfx942',
  '-nogpulib',
  '-nogpuinc',
  '--cuda-device-only',
  '-std=c++17',
  '-O3',
  '-Wall',
  '-Werror',
  '-S',
] as const;

/** The clang that compiles gfx942 here: `TILEKIT_CLANG`, else clang-19 on the path or in /usr/lib/llvm-19; undefined when none runs. */
export function findGfx942Clang(env: Readonly<Record<string, string | undefined>> = process.env): string | undefined {
  const candidates = [env['TILEKIT_CLANG'], 'clang-19', '/usr/lib/llvm-19/bin/clang-19'].filter((c): c is string => c !== undefined);
  return candidates.find((c) => spawnSync(c, ['--version'], { encoding: 'utf8' }).status === 0);
}

/** clang failed on an instance (the message has its stderr and the numbered source). */
export class Gfx942CompileError extends TilekitError {
  constructor(message: string) {
    super('gemm/gfx942-compile', message);
  }
}

/**
 * Compiles `instance` (its `source()`, one kernel named `instance.name`) with `clang` and
 * `GFX942_CLANG_FLAGS`; returns the assembly and the kernel's resources. Throws
 * `Gfx942CompileError` when clang fails or the assembly does not hold exactly that kernel.
 */
export function compileGfx942(
  instance: { readonly name: string; source(): string },
  clang: string,
): { readonly asm: string; readonly resources: Gfx942KernelResources } {
  const dir = mkdtempSync(join(tmpdir(), 'tilekit-gfx942-'));
  try {
    const file = join(dir, `${instance.name}.hip`);
    const source = instance.source();
    writeFileSync(file, source);
    const out = join(dir, `${instance.name}.s`);
    const res = spawnSync(clang, [...GFX942_CLANG_FLAGS, '-o', out, file], { encoding: 'utf8', timeout: 300_000 });
    if (res.status !== 0) {
      const numbered = source
        .split('\n')
        .map((l, i) => `${String(i + 1).padStart(4)}| ${l}`)
        .join('\n');
      throw new Gfx942CompileError(`${clang} failed on ${instance.name}:\n${res.stderr}${res.error?.message ?? ''}\n${numbered}`);
    }
    const asm = readFileSync(out, 'utf8');
    const [resources, ...more] = parseGfx942Resources(asm);
    if (resources === undefined || more.length > 0 || resources.name !== instance.name)
      throw new Gfx942CompileError(`${instance.name}: expected exactly one kernel named so in the assembly`);
    return { asm, resources };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
