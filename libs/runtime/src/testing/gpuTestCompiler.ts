// The nvcc compiler a *.gpu.spec.ts builds its kernels with: one per test file (and name), made on
// first use so that a run without nvcc or a device fails or skips only where a kernel is built.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NvccCompiler } from '../nvccCompiler.ts';

const compilers = new Map<string, NvccCompiler>();

/**
 * The spec's shared `NvccCompiler`, caching into `$TILEKIT_CACHE_DIR` or else a fresh temp dir
 * `tilekit-<name>-…`. Calls with
 * the same `name` return the same compiler.
 * @throws CompilerUnavailableError (on the first call for `name`) when nvcc cannot be found.
 */
export function gpuTestCompiler(name: string): NvccCompiler {
  let compiler = compilers.get(name);
  if (compiler === undefined) {
    compiler = new NvccCompiler({ cacheDir: process.env['TILEKIT_CACHE_DIR'] || mkdtempSync(join(tmpdir(), `tilekit-${name}-`)) });
    compilers.set(name, compiler);
  }
  return compiler;
}
